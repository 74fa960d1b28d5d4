/* Object ids, output paths and input names (names.c) against the golden file that Java's ObjectIdTest
 * writes and Python's test_names.py reads too: the same accept/refuse answer for every byte string. */
#include "check.h"
#include "names.h"

#include <stdlib.h>
#include <string.h>

static int unhex(const char *h, unsigned char *out, size_t cap, size_t *len) {
    if (strcmp(h, "-") == 0) {
        *len = 0;
        return 0;
    }
    size_t n = strlen(h);
    if (n % 2 || n / 2 > cap) {
        return -1;
    }
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v;
        if (sscanf(h + 2 * i, "%2x", &v) != 1) {
            return -1;
        }
        out[i] = (unsigned char)v;
    }
    *len = n / 2;
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_names GOLDEN_FILE\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    CHECK(f != NULL, "cannot open %s", argv[1]);
    if (!f) {
        return 1;
    }
    static char line[20000];
    static unsigned char bytes[8192];
    char kind[8], hex[17000], answer[16], err[256];
    int lines = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') {
            continue;
        }
        size_t len = 0;
        CHECK(sscanf(line, "%7s %16999s %15s", kind, hex, answer) == 3 && unhex(hex, bytes, sizeof bytes, &len) == 0,
              "unreadable line %s", line);
        int rc = strcmp(kind, "id") == 0     ? fk_id_check((const char *)bytes, len, err, sizeof err)
                 : strcmp(kind, "path") == 0 ? fk_output_path_check((const char *)bytes, len, err, sizeof err)
                                             : fk_input_name_check((const char *)bytes, len, err, sizeof err);
        CHECK((rc == 0) == (strcmp(answer, "ok") == 0), "%s %s: C says %s", kind, hex, rc == 0 ? "ok" : err);
        lines++;
    }
    fclose(f);
    CHECK(lines > 9000, "only %d lines", lines);
    /* the reasons name what is wrong, and a NUL inside is seen, never cut at */
    CHECK(fk_id_check("res/x\0-other", 12, err, sizeof err) != 0 && strstr(err, "U+0000"), "%s", err);
    CHECK(fk_id_check("res/q/../x", 10, err, sizeof err) != 0 && strstr(err, "'..'"), "%s", err);
    CHECK(fk_id_check("k\nevil", 6, err, sizeof err) != 0 && strstr(err, "U+000A"), "%s", err);
    CHECK(fk_id_check("results/r-1", 11, err, sizeof err) == 0, "%s", err);
    printf("%d names checked\n", lines);
    return check_failures;
}
