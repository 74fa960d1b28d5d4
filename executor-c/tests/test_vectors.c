/* Decodes every executor-facing golden vector (protocol/src/test/resources/vectors), checks
 * its canonical dump against the vector's .txt, and checks that re-encoding gives back the
 * exact bytes. Client-facing vectors are counted and skipped: the C executor never sees them. */
#include "../src/dump.h"
#include "../src/proto.h"
#include "check.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    fk_buf b;
    fk_buf_init(&b);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        fk_buf_put(&b, chunk, n);
    }
    fclose(f);
    fk_buf_u8(&b, 0);
    *len = b.len - 1;
    return (char *)b.data;
}

/* The .txt without its '#' comment lines. */
static char *expected_dump(const char *txt, int *executor_facing) {
    fk_buf b;
    fk_buf_init(&b);
    *executor_facing = strstr(txt, "# executor-facing message") != NULL;
    for (const char *line = txt; *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line + 1) : strlen(line);
        if (line[0] != '#') {
            fk_buf_put(&b, line, n);
        }
        line += n;
    }
    fk_buf_u8(&b, 0);
    return (char *)b.data;
}

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void check_vector(const char *dir, const char *name, int *checked, int *skipped) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len = 0;
    char *bin = slurp(path, &len);
    size_t stem = strlen(name) - 4;
    snprintf(path, sizeof path, "%s/%.*s.txt", dir, (int)stem, name);
    size_t tlen;
    char *txt = slurp(path, &tlen);
    CHECK(bin && txt, "%s: cannot read the .bin or its .txt", name);
    if (!bin || !txt) {
        free(bin);
        free(txt);
        return;
    }
    int executor_facing;
    char *want = expected_dump(txt, &executor_facing);
    if (!executor_facing) {
        (*skipped)++;
        free(bin);
        free(txt);
        free(want);
        return;
    }
    CHECK(len >= 5 && fk_get_u32((const uint8_t *)bin) == len - 4, "%s: bad length prefix", name);
    fk_msg m;
    char err[256];
    int rc = fk_decode((const uint8_t *)bin + 4, len - 4, &m, err, sizeof err);
    CHECK(rc == 0, "%s: decode failed: %s", name, err);
    if (rc == 0) {
        fk_buf dump;
        fk_buf_init(&dump);
        CHECK(fk_dump(&m, &dump) == 0, "%s: dump failed", name);
        fk_buf_u8(&dump, 0);
        CHECK(strcmp((char *)dump.data, want) == 0, "%s: dump differs\n--- got\n%s--- want\n%s", name,
              (char *)dump.data, want);
        fk_buf again;
        fk_buf_init(&again);
        fk_encode(&m, &again);
        CHECK(again.len == len && memcmp(again.data, bin, len) == 0, "%s: re-encoded bytes differ (%zu vs %zu bytes)",
              name, again.len, len);
        fk_buf_free(&again);
        fk_buf_free(&dump);
        fk_msg_free(&m);
        (*checked)++;
    }
    free(bin);
    free(txt);
    free(want);
}

/* Decodes the vector called name (its frame after the length) into *m; returns its bytes (the
 * caller frees them and the message) or NULL, counted as a failure, when it is missing or bad. */
static char *load_vector(const char *dir, const char *name, fk_msg *m) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.bin", dir, name);
    size_t len = 0;
    char *bin = slurp(path, &len);
    CHECK(bin != NULL, "missing vector %s", name);
    char err[256];
    if (bin && fk_decode((const uint8_t *)bin + 4, len - 4, m, err, sizeof err) != 0) {
        CHECK(0, "%s: %s", name, err);
        free(bin);
        return NULL;
    }
    return bin;
}

/* The data-diffusion extensions inside vector 31 decode to what its description says. */
static void check_data_extensions(const char *dir) {
    fk_msg m;
    char *bin = load_vector(dir, "31_dispatch_data_task", &m);
    if (!bin) {
        return;
    }
    char err[256];
    fk_spec s;
    CHECK(fk_spec_decode((const uint8_t *)m.u.dispatch.tasks[0].spec.s, m.u.dispatch.tasks[0].spec.len, &s, err,
                         sizeof err) == 0,
          "31 spec: %s", err);
    fk_input *in;
    size_t nin;
    CHECK(fk_inputs_decode(&fk_ext_find(&s.ext, FK_EXT_INPUTS)->value, &in, &nin, err, sizeof err) == 0, "inputs: %s",
          err);
    CHECK(nin == 2, "two inputs, got %zu", nin);
    CHECK(strcmp(in[0].id.s, "mosaic/tile-0001.fits") == 0 && in[0].size == 10485760 && in[0].unpack == 0
              && strcmp(in[0].name.s, "tile.fits") == 0,
          "first input");
    CHECK(strcmp(in[1].source.s, "http://store.example/catalog.tar.gz") == 0 && in[1].size == -1 && in[1].unpack == 3
              && strcmp(in[1].name.s, "catalog") == 0,
          "second input");
    fk_inputs_free(in, nin);
    fk_output *out;
    size_t nout;
    CHECK(fk_outputs_decode(&fk_ext_find(&s.ext, FK_EXT_OUTPUTS)->value, &out, &nout, err, sizeof err) == 0,
          "outputs: %s", err);
    CHECK(nout == 1 && strcmp(out[0].path.s, "count.txt") == 0 && strcmp(out[0].id.s, "counts/tile-0001") == 0,
          "output");
    fk_outputs_free(out, nout);
    fk_hint *h;
    size_t nh;
    CHECK(fk_hints_decode(&fk_ext_find(&m.u.dispatch.tasks[0].ext, FK_EXT_HINTS)->value, &h, &nh, err, sizeof err) == 0,
          "hints: %s", err);
    CHECK(nh == 1 && h[0].npeers == 2 && strcmp(h[0].peers[1].s, "10.0.0.9:41000") == 0, "hints");
    fk_hints_free(h, nh);
    fk_spec_free(&s);
    fk_msg_free(&m);
    free(bin);
}

/* Vector 40's task takes 4 slots: read from the decoded spec and straight from the encoded one. */
static void check_resources(const char *dir) {
    fk_msg m;
    char *bin = load_vector(dir, "40_dispatch_resources", &m);
    if (!bin) {
        return;
    }
    char err[256];
    const fk_str *blob = &m.u.dispatch.tasks[0].spec;
    CHECK(fk_spec_blob_cores((const uint8_t *)blob->s, blob->len) == 4, "40: cores from the encoded spec");
    fk_spec s;
    CHECK(fk_spec_decode((const uint8_t *)blob->s, blob->len, &s, err, sizeof err) == 0, "40 spec: %s", err);
    int declared = 0;
    CHECK(fk_spec_cores(&s, &declared) == 4 && declared, "40: cores from the decoded spec");
    fk_spec_free(&s);
    /* a spec stating nothing takes one slot, and so does a truncated one */
    CHECK(fk_spec_blob_cores((const uint8_t *)blob->s, blob->len - 3) == 1, "40 truncated: one slot");
    fk_msg_free(&m);
    free(bin);
}

/* Malformed frames are rejected with an error naming the field, never read out of bounds
 * (the sanitizer build runs this too). */
static void check_malformed(void) {
    fk_msg m;
    char err[256];
    static const uint8_t bad_type[] = {0x7f};
    CHECK(fk_decode(bad_type, sizeof bad_type, &m, err, sizeof err) == -1 && strstr(err, "unknown message type"),
          "unknown type: %s", err);
    static const uint8_t short_credit[] = {FK_CREDIT, 0, 0};
    CHECK(fk_decode(short_credit, sizeof short_credit, &m, err, sizeof err) == -1 && strstr(err, "credits"),
          "truncated credit: %s", err);
    static const uint8_t negative_credit[] = {FK_CREDIT, 0x80, 0, 0, 0};
    CHECK(fk_decode(negative_credit, sizeof negative_credit, &m, err, sizeof err) == -1, "credit above 2^31-1");
    static const uint8_t huge_bundle[] = {FK_DISPATCH, 0x7f, 0xff, 0xff, 0xff, 0, 0};
    CHECK(fk_decode(huge_bundle, sizeof huge_bundle, &m, err, sizeof err) == -1 && strstr(err, "tasks"),
          "count that cannot fit: %s", err);
    static const uint8_t trailing[] = {FK_CREDIT, 0, 0, 0, 1, 9};
    CHECK(fk_decode(trailing, sizeof trailing, &m, err, sizeof err) == -1, "trailing bytes");
    static const uint8_t bad_magic[] = {FK_HELLO, 'N', 'O', 'P', 'E', 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0};
    CHECK(fk_decode(bad_magic, sizeof bad_magic, &m, err, sizeof err) == -1 && strstr(err, "magic"), "magic: %s", err);
    /* A spec whose argv is empty is refused: a task needs a command. */
    static const uint8_t empty_argv[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    fk_spec s;
    CHECK(fk_spec_decode(empty_argv, sizeof empty_argv, &s, err, sizeof err) == -1 && strstr(err, "argv"),
          "empty argv: %s", err);
    /* Every truncation of a valid DISPATCH fails cleanly. */
    fk_msg d = {0};
    d.type = FK_DISPATCH;
    fk_dtask t = {0};
    t.task_id = 7;
    fk_buf spec;
    fk_buf_init(&spec);
    fk_buf_u32(&spec, 1);
    fk_buf_blob(&spec, "/bin/true", 9);
    fk_buf_u32(&spec, 0);
    fk_buf_blob(&spec, "", 0);
    fk_buf_u32(&spec, 0);
    fk_buf_u16(&spec, 0);
    t.spec = fk_str_dup((const char *)spec.data, spec.len);
    d.u.dispatch.n = 1;
    d.u.dispatch.tasks = &t;
    fk_buf frame;
    fk_buf_init(&frame);
    fk_encode(&d, &frame);
    for (size_t cut = 5; cut < frame.len; cut++) {
        CHECK(fk_decode(frame.data + 4, cut - 4, &m, err, sizeof err) == -1, "truncated at %zu decoded", cut);
    }
    /* a task id cut short is named as the 8 bytes it is (the count and the id's first bytes remain) */
    fk_reader short_id;
    fk_reader_init(&short_id, (const uint8_t *)"\0\0\0\0\0\0\x01", 7);
    fk_rd_u64(&short_id, "taskId");
    CHECK(!fk_reader_ok(&short_id) && strstr(short_id.err, "taskId: truncated (needs 8 bytes, 7 left)"),
          "a short task id: %s", short_id.err);
    CHECK(fk_decode(frame.data + 4, frame.len - 4, &m, err, sizeof err) == 0, "whole frame: %s", err);
    fk_msg_free(&m);
    fk_str_free(&t.spec);
    fk_buf_free(&spec);
    fk_buf_free(&frame);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "../protocol/src/test/resources/vectors";
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "cannot open vector directory %s\n", dir);
        return 2;
    }
    char *names[256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 256) {
        size_t l = strlen(e->d_name);
        if (l > 4 && strcmp(e->d_name + l - 4, ".bin") == 0) {
            names[n++] = strdup(e->d_name);
        }
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_names);
    int checked = 0, skipped = 0;
    for (int i = 0; i < n; i++) {
        check_vector(dir, names[i], &checked, &skipped);
        free(names[i]);
    }
    CHECK(checked >= 21, "expected at least 21 executor-facing vectors, found %d", checked);
    check_data_extensions(dir);
    check_resources(dir);
    check_malformed();
    printf("golden vectors: %d executor-facing checked, %d client-facing skipped; %d failures\n", checked, skipped,
           check_failures);
    return check_failures ? 1 : 0;
}
