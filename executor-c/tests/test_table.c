/* The C executor's constants against the protocol's table (protocol/src/main/resources/io/falkon/protocol/
 * protocol.table), as Java's ProtocolTableTest and Python's test_table.py check theirs: the message types it
 * knows (the executor's side of the wire) by code and name, every extension tag it names, the statuses, the
 * error codes' names and the execution flags. The layouts the executor decodes are held to the table by the
 * golden vectors (test_vectors), which Java checks against the table. */
#include "check.h"
#include "proto.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    long value;
} named;

/* What the executor names in proto.h: each must be in the table with this value. */
static const named EXTS[] = {{"RETRIES", FK_EXT_RETRIES},     {"INPUTS", FK_EXT_INPUTS},
                             {"OUTPUTS", FK_EXT_OUTPUTS},     {"SHELL_LINE", FK_EXT_SHELL_LINE},
                             {"RESOURCES", FK_EXT_RESOURCES}, {"WORKER", FK_EXT_WORKER},
                             {"TEMPORARY", FK_EXT_TEMPORARY}, {"ARCHIVE", FK_EXT_ARCHIVE},
                             {"HINTS", FK_EXT_HINTS},         {"BYPASS_CACHE", FK_EXT_BYPASS_CACHE},
                             {"DATA_STATS", FK_EXT_DATA_STATS}, {"HELD", FK_EXT_HELD},
                             {"ARCHIVED", FK_EXT_ARCHIVED}, {"NAMED_RESOURCES", FK_EXT_NAMED_RESOURCES},
                             {"READ_ONLY", FK_EXT_READ_ONLY}};
static const named STATUSES[] = {{"EXITED", FK_EXITED},
                                 {"TIMEOUT", FK_TIMEOUT},
                                 {"LAUNCH_FAILED", FK_LAUNCH_FAILED},
                                 {"EXECUTOR_LOST", FK_EXECUTOR_LOST},
                                 {"CANCELLED", FK_CANCELLED},
                                 {"REJECTED", FK_REJECTED},
                                 {"FETCH_FAILED", FK_FETCH_FAILED},
                                 {"OUTPUT_FAILED", FK_OUTPUT_FAILED},
                                 {"DEPENDENCY_FAILED", FK_DEPENDENCY_FAILED}};
static const named FLAGS[] = {{"STDOUT_TRUNCATED", FK_FLAG_STDOUT_TRUNCATED},
                              {"STDERR_TRUNCATED", FK_FLAG_STDERR_TRUNCATED},
                              {"NO_EXEC", FK_FLAG_NO_EXEC},
                              {"PERMANENT", FK_FLAG_PERMANENT}};

/* The value of name in the table's rows of kind, or -1. */
static long in_table(char rows[][3][64], int n, const char *kind, const char *name) {
    for (int i = 0; i < n; i++) {
        if (strcmp(rows[i][0], kind) == 0 && strcmp(rows[i][2], name) == 0) {
            return strtol(rows[i][1], NULL, 0);
        }
    }
    return -1;
}

static void each_in_table(char rows[][3][64], int n, const char *kind, const named *list, size_t count) {
    for (size_t i = 0; i < count; i++) {
        long v = in_table(rows, n, kind, list[i].name);
        CHECK(v == list[i].value, "%s %s: C has %ld, the table %ld", kind, list[i].name, list[i].value, v);
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_table PROTOCOL_TABLE\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    CHECK(f != NULL, "cannot open %s", argv[1]);
    if (!f) {
        return 1;
    }
    static char rows[512][3][64]; /* kind, code, name */
    static char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f) && n < 512) {
        if (line[0] == '#' || line[0] == '\n') {
            continue;
        }
        char kind[64], a[64], b[64];
        if (sscanf(line, "%63s %63s %63s", kind, a, b) != 3) {
            continue;
        }
        if (strcmp(kind, "struct") == 0) {
            continue;
        }
        snprintf(rows[n][0], 64, "%s", kind);
        snprintf(rows[n][1], 64, "%s", a);
        snprintf(rows[n][2], 64, "%s", b);
        n++;
    }
    fclose(f);
    CHECK(n > 60, "only %d rows read", n);
    /* every message type of the table: the executor names exactly those it speaks, by the table's name */
    int known = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(rows[i][0], "message") != 0) {
            continue;
        }
        long code = strtol(rows[i][1], NULL, 0);
        const char *mine = fk_type_name((int)code);
        CHECK(!mine || strcmp(mine, rows[i][2]) == 0, "message 0x%02lx: C calls it %s, the table %s", code, mine,
              rows[i][2]);
        known += mine != NULL;
        if (strcmp(rows[i][0], "message") == 0 && code >= 0x10 && code < 0x20) {
            CHECK(mine != NULL, "executor message %s (0x%02lx) unknown to the C executor", rows[i][2], code);
        }
    }
    CHECK(known >= 12, "the C executor knows %d message types", known);
    for (int code = 0; code < 256; code++) {
        const char *mine = fk_type_name(code);
        CHECK(!mine || in_table(rows, n, "message", mine) == code, "C's message %s (0x%02x) is not the table's",
              mine ? mine : "", code);
    }
    each_in_table(rows, n, "ext", EXTS, sizeof EXTS / sizeof *EXTS);
    each_in_table(rows, n, "status", STATUSES, sizeof STATUSES / sizeof *STATUSES);
    each_in_table(rows, n, "flag", FLAGS, sizeof FLAGS / sizeof *FLAGS);
    for (int i = 0; i < n; i++) {
        if (strcmp(rows[i][0], "error") == 0) {
            long code = strtol(rows[i][1], NULL, 0);
            CHECK(strcmp(fk_error_name((int)code), rows[i][2]) == 0, "error %ld: C calls it %s, the table %s", code,
                  fk_error_name((int)code), rows[i][2]);
        }
    }
    printf("%d rows of the protocol table checked\n", n);
    return check_failures;
}
