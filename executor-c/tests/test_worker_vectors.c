/* The persistent-worker framing against its golden vectors (protocol/src/test/resources/
 * worker-vectors): the requests the C executor encodes are byte for byte the vectors', and it
 * decodes the vectors' responses to their fields; a truncated or padded response is refused. */
#include "check.h"
#include "worker.h"

#include <stdlib.h>
#include <string.h>

static uint8_t *slurp(const char *dir, const char *name, size_t *len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        CHECK(0, "cannot open %s", path);
        *len = 0;
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n + 1);
    *len = fread(b, 1, (size_t)n, f);
    fclose(f);
    return b;
}

static void check_request(const char *dir, const char *name, uint64_t id, uint32_t cap, fk_str *argv, size_t argc,
                          fk_kv *env, size_t nenv, const char *wd, const char *payload, size_t npayload) {
    fk_spec s;
    memset(&s, 0, sizeof s);
    s.argc = argc;
    s.argv = argv;
    s.env.n = nenv;
    s.env.items = env;
    fk_buf b;
    fk_buf_init(&b);
    fk_worker_request(&b, id, cap, &s, NULL, wd, (const uint8_t *)payload, npayload);
    size_t len;
    uint8_t *want = slurp(dir, name, &len);
    CHECK(want && len == b.len && memcmp(want, b.data, len) == 0, "%s: encoded %zu bytes, vector has %zu", name, b.len,
          len);
    free(want);
    fk_buf_free(&b);
}

static void check_response(const char *dir, const char *name, uint64_t id, int32_t code, const char *out,
                           const char *err) {
    size_t len;
    uint8_t *frame = slurp(dir, name, &len);
    if (!frame) {
        return;
    }
    char why[300];
    fk_worker_response r;
    CHECK(len >= 4 && fk_get_u32(frame) == len - 4, "%s: length prefix", name);
    CHECK(fk_worker_response_decode(frame + 4, len - 4, &r, why, sizeof why) == 0, "%s: %s", name, why);
    CHECK(r.task_id == id && r.exit_code == code, "%s: task %llu exit %d", name, (unsigned long long)r.task_id,
          r.exit_code);
    CHECK(r.nout == strlen(out) && memcmp(r.out, out, r.nout) == 0, "%s: stdout", name);
    CHECK(r.nerr == strlen(err) && memcmp(r.err, err, r.nerr) == 0, "%s: stderr", name);
    for (size_t cut = 4; cut < len; cut++) {
        CHECK(fk_worker_response_decode(frame + 4, cut - 4, &r, why, sizeof why) == -1, "%s cut at %zu decoded", name,
              cut);
    }
    uint8_t *padded = calloc(len + 1, 1);
    memcpy(padded, frame, len);
    CHECK(fk_worker_response_decode(padded + 4, len - 3, &r, why, sizeof why) == -1 && strstr(why, "worker response"),
          "%s padded: %s", name, why);
    free(padded);
    free(frame);
}

/* A string literal as an fk_str (nothing to free). */
#define LIT(s) ((fk_str){(char *)(s), sizeof(s) - 1})

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "../protocol/src/test/resources/worker-vectors";
    fk_str a1[] = {LIT("call"), LIT("/scratch/7.out")};
    fk_kv env[] = {{LIT("OMP_NUM_THREADS"), LIT("1")}};
    check_request(dir, "01_request.bin", 7, 65536, a1, 2, env, 1, "/scratch", "\x80\x04K.", 4);
    fk_str a3[] = {LIT("true")};
    check_request(dir, "03_request_bare.bin", 8, 1024, a3, 1, NULL, 0, "/home/u", "", 0);
    check_response(dir, "02_response.bin", 7, 0, "42\n", "warning: \xc3\xa9\n");
    check_response(dir, "04_response_failed.bin", 8, 3, "", "no such input\n");
    if (check_failures) {
        fprintf(stderr, "%d worker-vector checks failed\n", check_failures);
    } else {
        printf("worker vectors: 2 requests and 2 responses as the vectors say\n");
    }
    return check_failures ? 1 : 0;
}
