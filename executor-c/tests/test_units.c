/* Unit tests of the C executor's parts: hashes, the task runner (real processes), the data
 * cache (real files, the real gzip and tar), and the peer server with the HTTP client (real
 * sockets on 127.0.0.1). */
#include "../src/affinity.h"
#include "../src/cache.h"
#include "../src/fsutil.h"
#include "../src/hash.h"
#include "../src/http.h"
#include "../src/peer.h"
#include "../src/resources.h"
#include "../src/runner.h"
#include "../src/staging.h"
#include "../src/worker.h"
#include "check.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <strings.h>
#include <sys/socket.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char scratch[PATH_MAX];

/* the deployment's token the caches and the peer server use */
#define TOKEN "c0ffee-token"

/* ---- peer fetches from several threads ---- */

struct counter {
    int ok;
    size_t bytes;
};

static int count_bytes(void *ctx, const void *data, size_t len) {
    (void)data;
    ((struct counter *)ctx)->bytes += len;
    return 0;
}

/* GETs http://peer/path with the token (or none); returns the HTTP outcome of fk_http_get. */
static int fk_http_get_path(const char *peer, const char *path, const char *token, struct counter *c) {
    char url[512], err[512];
    snprintf(url, sizeof url, "http://%s%s", peer, path);
    int rc = fk_http_get(url, token, NULL, count_bytes, c, err, sizeof err);
    return rc == 0 ? 200 : strstr(err, "HTTP 401") ? 401 : rc;
}

struct fetch_arg {
    const char *peer;
    struct counter *ok;
};

static void *fetch_many(void *p) {
    struct fetch_arg *a = p;
    for (int i = 0; i < 100; i++) {
        struct counter c = {0};
        if (fk_http_get_path(a->peer, "/objects?x=1&id=results%2F1&y=2&z=3", TOKEN, &c) == 200 && c.bytes == 6) {
            a->ok->ok++;
        }
    }
    return NULL;
}



static void hex_of(const char *s, int md5, char *hex) {
    fk_hash h;
    fk_hash_init(&h, md5);
    /* in uneven pieces, to cover the block buffering */
    size_t n = strlen(s);
    for (size_t at = 0; at < n;) {
        size_t take = (at % 7) + 1;
        take = take > n - at ? n - at : take;
        fk_hash_update(&h, s + at, take);
        at += take;
    }
    fk_hash_hex(&h, hex);
}

static void test_hashes(void) {
    char hex[65];
    hex_of("", 0, hex);
    CHECK(strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0, "sha256('') %s", hex);
    hex_of("abc", 0, hex);
    CHECK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0, "sha256(abc) %s", hex);
    hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 0, hex);
    CHECK(strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0, "sha256(448 bits) %s",
          hex);
    hex_of("", 1, hex);
    CHECK(strcmp(hex, "d41d8cd98f00b204e9800998ecf8427e") == 0, "md5('') %s", hex);
    hex_of("The quick brown fox jumps over the lazy dog", 1, hex);
    CHECK(strcmp(hex, "9e107d9d372bb6826bd81d3542a419d6") == 0, "md5(fox) %s", hex);
    char *enc = fk_url_encode("a b/c~é");
    CHECK(strcmp(enc, "a+b%2Fc%7E%C3%A9") == 0, "url encoding %s", enc);
    free(enc);
}

/* A spec for /bin/sh -c SCRIPT. */
static fk_spec sh(const char *script, uint32_t wall_ms) {
    fk_spec s;
    memset(&s, 0, sizeof s);
    s.argc = 3;
    s.argv = calloc(3, sizeof(fk_str));
    s.argv[0] = fk_str_of("/bin/sh");
    s.argv[1] = fk_str_of("-c");
    s.argv[2] = fk_str_of(script);
    s.workdir = fk_str_of("");
    s.wall_ms = wall_ms;
    return s;
}

/* Whether pid is dead (gone, or a zombie nobody has reaped yet) within ms: SIGKILL is
 * delivered asynchronously. */
static int gone_within(int pid, int ms) {
    int64_t until = fk_mono_millis() + ms;
    do {
        char path[64], stat[512] = "";
        snprintf(path, sizeof path, "/proc/%d/stat", pid);
        FILE *f = fopen(path, "r");
        if (!f) {
            return 1;
        }
        size_t n = fread(stat, 1, sizeof stat - 1, f);
        fclose(f);
        stat[n] = 0;
        const char *close = strrchr(stat, ')');
        if (close && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X')) {
            return 1;
        }
        usleep(2000);
    } while (fk_mono_millis() < until);
    return 0;
}

typedef struct {
    fk_runner *r;
    uint64_t task;
} cancel_arg;

static void *cancel_soon(void *p) {
    cancel_arg *a = p;
    /* wait until the task is really running (its marker file exists), then cancel it */
    char marker[PATH_MAX];
    snprintf(marker, sizeof marker, "%s/started", scratch);
    while (access(marker, F_OK) != 0) {
        usleep(1000);
    }
    fk_runner_cancel(a->r, a->task);
    return NULL;
}

/* When slot threads are pinned: auto only with one slot per CPU and more than one CPU */
static void test_pin_decision(void) {
    CHECK(fk_affinity_decide(FK_PIN_AUTO, 2, 2), "auto, 2 slots on 2 CPUs: pinned");
    CHECK(fk_affinity_decide(FK_PIN_AUTO, 64, 64), "auto, 64 slots on 64 CPUs: pinned");
    CHECK(!fk_affinity_decide(FK_PIN_AUTO, 1, 1), "auto, one CPU: nothing to gain");
    CHECK(!fk_affinity_decide(FK_PIN_AUTO, 1, 2), "auto, fewer slots than CPUs (executors sharing a node)");
    CHECK(!fk_affinity_decide(FK_PIN_AUTO, 4, 2), "auto, more slots than CPUs");
    CHECK(fk_affinity_decide(FK_PIN_ON, 4, 2), "on: pinned whatever the counts");
    CHECK(fk_affinity_decide(FK_PIN_ON, 1, 1), "on, one CPU");
    CHECK(!fk_affinity_decide(FK_PIN_ON, 2, 0), "on, the CPU set unreadable");
    CHECK(!fk_affinity_decide(FK_PIN_OFF, 2, 2), "off");
}

static void test_runner(void) {
    fk_runner r;
    fk_runner_init(&r, 16, scratch);
    fk_exec x;

    fk_spec s = sh("echo hello; echo oops >&2; exit 3", 0);
    fk_run(&r, 1, &s, NULL, NULL, &x);
    CHECK(x.status == FK_EXITED && x.exit_code == 3, "exit code: status %d code %d", x.status, x.exit_code);
    CHECK(x.out.len == 6 && memcmp(x.out.s, "hello\n", 6) == 0, "stdout '%s'", x.out.s);
    CHECK(x.err.len == 5 && memcmp(x.err.s, "oops\n", 5) == 0, "stderr '%s'", x.err.s);
    CHECK(x.flags == 0 && x.finished_us >= x.started_us, "flags %d", x.flags);
    fk_exec_free(&x);
    fk_spec_free(&s);

    /* output over the cap: the first 16 bytes kept, the rest drained, truncation flagged */
    s = sh("head -c 100000 /dev/zero | tr '\\0' x; echo done >&2", 0);
    fk_run(&r, 2, &s, NULL, NULL, &x);
    CHECK(x.status == FK_EXITED && x.exit_code == 0, "big output: status %d code %d", x.status, x.exit_code);
    CHECK(x.out.len == 16 && x.flags == FK_FLAG_STDOUT_TRUNCATED, "truncated: len %zu flags %d", x.out.len, x.flags);
    fk_exec_free(&x);
    fk_spec_free(&s);

    /* the wall-time limit kills the whole group, including a background grandchild */
    char pidfile[PATH_MAX + 16], script[PATH_MAX + 128];
    snprintf(pidfile, sizeof pidfile, "%s/grandchild", scratch);
    snprintf(script, sizeof script, "sleep 30 & echo $! > %s; wait", pidfile);
    s = sh(script, 200);
    int64_t t0 = fk_mono_millis();
    fk_run(&r, 3, &s, NULL, NULL, &x);
    int64_t took = fk_mono_millis() - t0;
    CHECK(x.status == FK_TIMEOUT && strstr(x.detail.s, "wall time 200 ms exceeded"), "timeout: status %d '%s'",
          x.status, x.detail.s);
    CHECK(took < 10000, "the timeout took %lld ms", (long long)took);
    FILE *f = fopen(pidfile, "r");
    int gc = 0;
    CHECK(f && fscanf(f, "%d", &gc) == 1, "grandchild pid written");
    if (f) {
        fclose(f);
    }
    CHECK(gc > 0 && gone_within(gc, 5000), "grandchild %d still alive", gc);
    fk_exec_free(&x);
    fk_spec_free(&s);

    /* environment from the spec and the extra variables; working directory */
    s = sh("printf '%s %s ' \"$GREETING\" \"$EXTRA\"; pwd", 0);
    s.env.n = 1;
    s.env.items = calloc(1, sizeof(fk_kv));
    s.env.items[0].key = fk_str_of("GREETING");
    s.env.items[0].value = fk_str_of("hi");
    char *extra[] = {"EXTRA=more", NULL};
    fk_runner wide;
    fk_runner_init(&wide, 4096, scratch);
    fk_run(&wide, 4, &s, extra, "/tmp", &x);
    CHECK(x.status == FK_EXITED && strcmp(x.out.s, "hi more /tmp\n") == 0, "env and dir: '%s'", x.out.s);
    fk_exec_free(&x);
    fk_spec_free(&s);

    /* a missing program and a missing directory are launch failures that say so */
    s = sh("true", 0);
    fk_str_free(&s.argv[0]);
    s.argv[0] = fk_str_of("/no/such/program");
    fk_run(&r, 5, &s, NULL, NULL, &x);
    CHECK(x.status == FK_LAUNCH_FAILED && strstr(x.detail.s, "cannot start /no/such/program"), "launch failed '%s'",
          x.detail.s);
    fk_exec_free(&x);
    fk_str_free(&s.workdir);
    s.workdir = fk_str_of("/no/such/dir");
    fk_run(&r, 6, &s, NULL, NULL, &x);
    CHECK(x.status == FK_LAUNCH_FAILED && strstr(x.detail.s, "working directory /no/such/dir does not exist"),
          "bad dir '%s'", x.detail.s);
    fk_exec_free(&x);
    fk_spec_free(&s);

    /* a process killed by a signal */
    s = sh("kill -9 $$", 0);
    fk_run(&r, 7, &s, NULL, NULL, &x);
    CHECK(x.status == FK_EXITED && x.exit_code == 137 && strstr(x.detail.s, "signal 9"), "signal: %d '%s'",
          x.exit_code, x.detail.s);
    fk_exec_free(&x);
    fk_spec_free(&s);

    /* cancel from another thread */
    snprintf(script, sizeof script, "touch %s/started; sleep 30", scratch);
    s = sh(script, 0);
    cancel_arg a = {&r, 8};
    pthread_t t;
    pthread_create(&t, NULL, cancel_soon, &a);
    fk_run(&r, 8, &s, NULL, NULL, &x);
    pthread_join(t, NULL);
    CHECK(x.status == FK_CANCELLED, "cancel: status %d", x.status);
    CHECK(!fk_runner_cancel(&r, 8), "nothing left to cancel");
    fk_exec_free(&x);
    fk_spec_free(&s);
    fk_runner_destroy(&r);
    fk_runner_destroy(&wide);
}

/* ---- cache ---- */

typedef struct {
    char log[4096];
} changes;

static void listen_changes(void *ctx, const char *id, int64_t size) {
    changes *c = ctx;
    size_t n = strlen(c->log);
    snprintf(c->log + n, sizeof c->log - n, "%s%s ", size >= 0 ? "+" : "-", id);
}

static void write_file(const char *path, const char *text, size_t len) {
    FILE *f = fopen(path, "wb");
    fwrite(text, 1, len, f);
    fclose(f);
}

static fk_input input(const char *id, const char *source, int64_t size, const char *checksum, int unpack) {
    fk_input in;
    memset(&in, 0, sizeof in);
    in.id = fk_str_of(id);
    in.source = fk_str_of(source);
    in.size = size;
    in.checksum = fk_str_of(checksum);
    in.unpack = (uint8_t)unpack;
    in.name = fk_str_of("");
    return in;
}

static void free_input(fk_input *in) {
    fk_str_free(&in->id);
    fk_str_free(&in->source);
    fk_str_free(&in->checksum);
    fk_str_free(&in->name);
}

static void test_cache(void) {
    char store[PATH_MAX], dir[PATH_MAX], path[PATH_MAX + 32];
    snprintf(store, sizeof store, "%s/store", scratch);
    snprintf(dir, sizeof dir, "%s/cache", scratch);
    fk_mkdirs(store);
    char block[100];
    memset(block, 'a', sizeof block);
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/obj%d", store, i);
        write_file(path, block, sizeof block);
    }
    changes ch = {{0}};
    char err[1024];
    int perm = 0;
    fk_cache *c = fk_cache_open(dir, 250, store, TOKEN, FK_REVALIDATE_STAT, listen_changes, &ch, err, sizeof err);
    CHECK(c != NULL, "open: %s", err);
    if (!c) {
        return;
    }
    fk_input o0 = input("o0", "obj0", 100, "", 0), o1 = input("o1", "obj1", 100, "", 0),
             o2 = input("o2", "obj2", 100, "", 0);
    fk_lease l0, l1, l2;
    CHECK(fk_cache_lease(c, &o0, NULL, 0, &l0, &perm, err, sizeof err) == 0 && l0.source == FK_SRC_STORE && l0.moved == 100,
          "first lease from the store: %s", err);
    fk_cache_release(c, &l0);
    CHECK(fk_cache_lease(c, &o0, NULL, 0, &l0, &perm, err, sizeof err) == 0 && l0.source == FK_SRC_LOCAL, "then a hit");
    struct stat st;
    CHECK(stat(l0.path, &st) == 0 && st.st_size == 100 && (st.st_mode & 0222) == 0, "cached read-only file");
    fk_cache_release(c, &l0);
    CHECK(fk_cache_lease(c, &o1, NULL, 0, &l1, &perm, err, sizeof err) == 0, "o1: %s", err);
    fk_cache_release(c, &l1);
    /* touch o0 so that o1 is the least recently used; o2 then evicts o1 */
    CHECK(fk_cache_lease(c, &o0, NULL, 0, &l0, &perm, err, sizeof err) == 0, "o0 again");
    fk_cache_release(c, &l0);
    CHECK(fk_cache_lease(c, &o2, NULL, 0, &l2, &perm, err, sizeof err) == 0, "o2: %s", err);
    CHECK(strcmp(ch.log, "+o0 +o1 -o1 +o2 ") == 0, "LRU eviction reported: '%s'", ch.log);
    /* pinned objects are never evicted: with o2 and o0 pinned there is no room for o1, which is read
     * through (the task gets it, the cache does not keep it) */
    CHECK(fk_cache_lease(c, &o0, NULL, 0, &l0, &perm, err, sizeof err) == 0, "pin o0");
    CHECK(fk_cache_lease(c, &o1, NULL, 0, &l1, &perm, err, sizeof err) == 0 && !l1.cached && l1.own != NULL,
          "no room: read through: %s", err);
    snprintf(path, sizeof path, "%s/o1-copy", scratch);
    CHECK(fk_lease_copy(&l1, path) == 0 && access(path, R_OK) == 0, "the task gets the read-through copy");
    fk_cache_release(c, &l1);
    fk_cache_release(c, &l0);
    fk_cache_release(c, &l2);
    fk_cached *all;
    size_t n = fk_cache_contents(c, &all);
    CHECK(n == 2, "two objects held, got %zu", n);
    fk_cached_free(all, n);

    /* verification: a wrong size or checksum is refused, and says where from */
    fk_input bad = input("bad", "obj3", 99, "", 0);
    CHECK(fk_cache_lease(c, &bad, NULL, 0, &l0, &perm, err, sizeof err) == -1 && strstr(err, "got 100 bytes") && perm,
          "size check (permanent: the store has it so): %s", err);
    free_input(&bad);
    bad = input("bad2", "obj3", -1, "md5:00000000000000000000000000000000", 0);
    CHECK(fk_cache_lease(c, &bad, NULL, 0, &l0, &perm, err, sizeof err) == -1 && strstr(err, "checksum mismatch"),
          "checksum check: %s", err);
    free_input(&bad);
    char sum[65];
    fk_sha256_hex(block, sizeof block, sum);
    char checksum[80];
    snprintf(checksum, sizeof checksum, "sha256:%s", sum);
    fk_input good = input("good", "obj3", 100, checksum, 0);
    CHECK(fk_cache_lease(c, &good, NULL, 0, &l0, &perm, err, sizeof err) == 0, "sha256 verified: %s", err);
    fk_cache_release(c, &l0);
    free_input(&good);
    bad = input("escape", "../outside", -1, "", 0);
    CHECK(fk_cache_lease(c, &bad, NULL, 0, &l0, &perm, err, sizeof err) == -1 && strstr(err, "leaves the shared store")
              && perm,
          "store root kept: %s", err);
    free_input(&bad);

    /* unpacking with the system's gzip and tar, cached in the unpacked form too */
    char cmd[4 * PATH_MAX];
    snprintf(cmd, sizeof cmd,
             "cd %s && mkdir -p t/sub && printf hello > t/sub/a.txt && tar -czf t.tgz -C t . && "
             "printf 0123456789 | gzip > ten.gz",
             store);
    CHECK(system(cmd) == 0, "making archives");
    fk_cache_close(c);
    fk_cache *big = fk_cache_open(dir, 1 << 20, store, TOKEN, FK_REVALIDATE_STAT, NULL, NULL, err, sizeof err);
    fk_input tgz = input("t.tgz", "t.tgz", -1, "", 3);
    CHECK(fk_cache_lease(big, &tgz, NULL, 0, &l0, &perm, err, sizeof err) == 0 && l0.size == 5, "tar.gz: %s (size %lld)", err,
          (long long)l0.size);
    snprintf(path, sizeof path, "%s/sub/a.txt", l0.path);
    CHECK(access(path, R_OK) == 0, "extracted %s", path);
    fk_cache_release(big, &l0);
    fk_input gz = input("ten.gz", "ten.gz", -1, "", 1);
    CHECK(fk_cache_lease(big, &gz, NULL, 0, &l0, &perm, err, sizeof err) == 0 && l0.size == 10, "gzip: %s", err);
    fk_cache_release(big, &l0);
    fk_input broken = input("o0", "obj0", 100, "", 1); /* not a gzip file */
    CHECK(fk_cache_lease(big, &broken, NULL, 0, &l0, &perm, err, sizeof err) == -1 && strstr(err, "cannot unpack o0"),
          "damaged archive: %s", err);
    free_input(&broken);

    /* outputs adopted as objects */
    snprintf(path, sizeof path, "%s/out.txt", scratch);
    write_file(path, "result", 6);
    fk_outfile of;
    CHECK(fk_outfile_open(scratch, scratch, "out.txt", "results/1", &of, err, sizeof err) == 0 && of.movable,
          "the sandbox's own file: %s", err);
    CHECK(fk_cache_register(big, "results/1", &of, err, sizeof err) == 0 && access(path, F_OK) != 0,
          "register (moved in): %s", err);
    fk_outfile_close(&of);
    CHECK(fk_cache_peek(big, "results/1", &l0) == 0 && l0.size == 6, "registered object served");
    fk_cache_release(big, &l0);

    /* the peer server and the HTTP client: a peer fetches what this cache holds */
    fk_peer_server *srv = fk_peer_start(big, 0, TOKEN, err, sizeof err);
    CHECK(srv != NULL, "peer server: %s", err);
    char peer[64];
    snprintf(peer, sizeof peer, "127.0.0.1:%d", fk_peer_port(srv));
    char dir2[PATH_MAX];
    snprintf(dir2, sizeof dir2, "%s/cache2", scratch);
    changes ch2 = {{0}};
    fk_cache *other = fk_cache_open(dir2, 1 << 20, NULL, TOKEN, FK_REVALIDATE_STAT, listen_changes, &ch2, err, sizeof err);
    fk_input via = input("results/1", "/nowhere/else", 6, "", 0);
    fk_str peers[2] = {fk_str_of("127.0.0.1:1"), fk_str_of(peer)}; /* a dead hint first: falls through */
    CHECK(fk_cache_lease(other, &via, peers, 2, &l1, &perm, err, sizeof err) == 0 && l1.source == FK_SRC_PEER && l1.moved == 6,
          "fetched from a peer: %s", err);
    fk_cache_release(other, &l1);
    fk_input missing = input("not/here", "/nowhere/else", -1, "", 0);
    CHECK(fk_cache_lease(other, &missing, peers + 1, 1, &l1, &perm, err, sizeof err) == -1 && strstr(err, "HTTP 404")
              && strstr(err, "does not exist in the shared store"),
          "stale hint and no store copy: %s", err);
    CHECK(strcmp(ch2.log, "+results/1 ") == 0, "peer copy reported: '%s'", ch2.log);

    /* a peer without the token is refused (401), so the fetch falls through to the store, which
     * has no copy either: the failure names both */
    char dir3[PATH_MAX];
    snprintf(dir3, sizeof dir3, "%s/cache3", scratch);
    fk_cache *stranger = fk_cache_open(dir3, 1 << 20, NULL, "not-the-token", FK_REVALIDATE_STAT, NULL, NULL, err, sizeof err);
    fk_input again = input("results/1", "/nowhere/else", 6, "", 0);
    CHECK(fk_cache_lease(stranger, &again, peers + 1, 1, &l1, &perm, err, sizeof err) == -1 && strstr(err, "HTTP 401"),
          "a peer refuses a fetch without the token: %s", err);
    free_input(&again);
    fk_cache_close(stranger);
    struct counter none = {0};
    CHECK(fk_http_get_path(peer, "/objects?id=results/1", NULL, &none) == 401, "no token: 401");
    /* a %00 cannot cut an id short into another object's; a batch body names canonical ids alone, as a form:
     * one id per line (the old form), an id of two lines, a NUL, a '..', a broken escape: refused whole */
    CHECK(fk_http_get_path(peer, "/objects?id=results/1%00-other", TOKEN, &none) != 200, "a NUL in a GET's id");
    CHECK(fk_http_get_path(peer, "/objects?id=results/1", TOKEN, &none) == 200, "the id itself");
    const char *forms[] = {"results/1\nresults/1", "id=k%0Aevil&id=results/1", "id=results%2F1%00-x", "id=a%2F..%2Fb",
                         "id=%ZZ", "id=results%2F1&other=x", "id="};
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        char url[128];
        snprintf(url, sizeof url, "http://%s/objects", peer);
        struct counter got = {0};
        int rc = fk_http_request("POST", url, TOKEN, forms[i], strlen(forms[i]), "application/x-www-form-urlencoded",
                                 NULL, count_bytes, &got, err, sizeof err);
        CHECK(rc != 0 && strstr(err, "HTTP 400"), "batch body %s: %s", forms[i], err);
    }

    /* many peers fetching at once: every connection has its own thread, and parses its own request
     * (strtok_r; strtok's shared state let one request's parsing clobber another's) */
    pthread_t fetchers[8];
    struct counter counts[8];
    struct fetch_arg args[8];
    for (int i = 0; i < 8; i++) {
        counts[i] = (struct counter){0};
        args[i] = (struct fetch_arg){.peer = peer, .ok = &counts[i]};
        pthread_create(&fetchers[i], NULL, fetch_many, &args[i]);
    }
    int every = 1;
    for (int i = 0; i < 8; i++) {
        pthread_join(fetchers[i], NULL);
        every &= counts[i].ok == 100;
    }
    CHECK(every, "800 concurrent peer fetches with several query parameters all answered 200");

    fk_str_free(&peers[0]);
    fk_str_free(&peers[1]);
    free_input(&via);
    free_input(&missing);
    fk_peer_stop(srv);
    fk_cache_close(other);
    fk_cache_close(big);
    free_input(&tgz);
    free_input(&gz);
    free_input(&o0);
    free_input(&o1);
    free_input(&o2);
}

/* ---- input names: the rule TaskInput has ---- */

/* Decodes an INPUTS value of one input named `name`: 0 if accepted. */
static int decode_named(const char *name) {
    fk_buf b;
    fk_buf_init(&b);
    fk_buf_u16(&b, 1);
    fk_buf_blob(&b, "data/x", 6);
    fk_buf_blob(&b, "data/x", 6);
    fk_buf_u64(&b, (uint64_t)-1);
    fk_buf_blob(&b, "", 0);
    fk_buf_u8(&b, 0);
    fk_buf_blob(&b, name, strlen(name));
    fk_str value = {(char *)b.data, b.len};
    fk_input *in = NULL;
    size_t n = 0;
    char err[256];
    int rc = fk_inputs_decode(&value, &in, &n, err, sizeof err);
    if (rc == 0) {
        fk_inputs_free(in, n);
    }
    fk_buf_free(&b);
    return rc;
}

/* DATA_STATS as the Java codec writes it (DataStatsCodecTest): 48 bytes, bytes written last. */
static void test_stats_layout(void) {
    fk_data_stats s = {3, 2, 1, 300, 200, 100, 4, 5000000000ull};
    fk_buf b;
    fk_buf_init(&b);
    fk_stats_encode(&s, &b);
    CHECK(b.len == 48, "DATA_STATS is %zu bytes", b.len);
    uint64_t written = 0;
    for (int i = 40; i < 48 && b.len == 48; i++) {
        written = written << 8 | b.data[i];
    }
    CHECK(written == 5000000000ull, "bytes written read back as %llu", (unsigned long long)written);
    fk_buf_free(&b);
}

/* OUTPUTS of one output (path, id as bytes, NULs included) through the decoder every task's outputs pass */
static int decode_output(const char *path, size_t pathlen, const char *id, size_t idlen, char *err, size_t errlen) {
    fk_buf b;
    fk_buf_init(&b);
    fk_buf_u16(&b, 1);
    fk_buf_blob(&b, path, pathlen);
    fk_buf_blob(&b, id, idlen);
    fk_str value = {(char *)b.data, b.len};
    fk_output *o = NULL;
    size_t n = 0;
    int rc = fk_outputs_decode(&value, &o, &n, err, errlen);
    if (rc == 0) {
        fk_outputs_free(o, n);
    }
    fk_buf_free(&b);
    return rc;
}

static void test_output_ids(void) {
    char err[256];
    CHECK(decode_output("o", 1, "res/x", 5, err, sizeof err) == 0, "a canonical id: %s", err);
    CHECK(decode_output("o", 1, "res/x\0-other", 12, err, sizeof err) != 0 && strstr(err, "outputs[0].id"),
          "a NUL is seen, not cut at: %s", err);
    CHECK(decode_output("o", 1, "res/q/../x", 10, err, sizeof err) != 0 && strstr(err, "'..'"), "'..': %s", err);
    CHECK(decode_output("o", 1, "k\nevil", 6, err, sizeof err) != 0, "a newline: %s", err);
    CHECK(decode_output("../o", 4, "res/x", 5, err, sizeof err) != 0 && strstr(err, "outputs[0].path"),
          "a path out of the directory: %s", err);
}

/* Directories made as needed: the whole path, an existing one left as it is, and a file in the way refused
 * by what follows (the file is never replaced). */
static void test_mkdirs(void) {
    char deep[PATH_MAX], file[PATH_MAX], under[PATH_MAX];
    mode_t old = umask(022);
    snprintf(deep, sizeof deep, "%s/mkdirs/a/b/c", scratch);
    CHECK(fk_mkdirs(deep) == 0, "a new path: %s", strerror(errno));
    struct stat st;
    CHECK(stat(deep, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0755, "made, a directory");
    CHECK(fk_mkdirs_mode(deep, 0700) == 0, "there already: %s", strerror(errno));
    CHECK(stat(deep, &st) == 0 && (st.st_mode & 0777) == 0755, "its mode left as it was: %o", st.st_mode & 0777);
    snprintf(file, sizeof file, "%s/mkdirs/a/file", scratch);
    FILE *f = fopen(file, "w");
    CHECK(f && fputs("kept", f) >= 0 && fclose(f) == 0, "a file");
    snprintf(under, sizeof under, "%s/x", file);
    CHECK(fk_mkdirs(under) != 0, "no directory under a file");
    CHECK(stat(file, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 4, "the file untouched");
    umask(old);
}

static void test_input_names(void) {
    const char *good[] = {"", "x.fits", "diffs/", "..x", ".hidden"};
    const char *bad[] = {"a/b", "/", "a//", "./", "../", ".", "..", "/x", "diffs/x"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        CHECK(decode_named(good[i]) == 0, "input name '%s' refused", good[i]);
    }
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK(decode_named(bad[i]) != 0, "input name '%s' accepted", bad[i]);
    }
}

/* ---- staging: names that clash, and a gather of many inputs ---- */

/* Gives s the one extension tag, its value b's bytes (fk_spec_free frees them). */
static void only_ext(fk_spec *s, uint16_t tag, fk_buf *b) {
    s->ext.n = 1;
    s->ext.items = calloc(1, sizeof *s->ext.items);
    s->ext.items[0].tag = tag;
    s->ext.items[0].value.s = (char *)b->data;
    s->ext.items[0].value.len = b->len;
}

/* A spec for /bin/sh -c SCRIPT whose INPUTS are ids[i] from the store's source ids[i], named names[i]. */
static fk_spec with_inputs(const char *script, const char *const *ids, const char *const *names, size_t n) {
    fk_spec s = sh(script, 0);
    fk_buf b;
    fk_buf_init(&b);
    fk_buf_u16(&b, (uint16_t)n);
    for (size_t i = 0; i < n; i++) {
        fk_buf_blob(&b, ids[i], strlen(ids[i]));
        fk_buf_blob(&b, ids[i], strlen(ids[i]));
        fk_buf_u64(&b, (uint64_t)-1);
        fk_buf_blob(&b, "", 0);
        fk_buf_u8(&b, 0);
        fk_buf_blob(&b, names[i], strlen(names[i]));
    }
    only_ext(&s, FK_EXT_INPUTS, &b);
    return s;
}

/* n files of the store under DIR/part-I (each holding its own id), as ids to read: the ids, and names
 * (every third one's "" beside the others' "parts/" when mixed, else all "parts/"); free_parts frees them. */
typedef struct {
    char **ids;
    const char **names;
    size_t n;
} parts;

static parts store_parts(const char *store, const char *dir, size_t n, int mixed) {
    parts p = {calloc(n, sizeof(char *)), calloc(n, sizeof(char *)), n};
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", store, dir);
    mkdir(path, 0755);
    for (size_t i = 0; i < n; i++) {
        char id[64];
        snprintf(id, sizeof id, "%s/part-%zu", dir, i);
        snprintf(path, sizeof path, "%s/%s", store, id);
        write_file(path, id, strlen(id));
        p.ids[i] = strdup(id);
        p.names[i] = mixed && i % 3 == 0 ? "" : "parts/";
    }
    return p;
}

static void free_parts(parts *p) {
    for (size_t i = 0; i < p->n; i++) {
        free(p->ids[i]);
    }
    free(p->ids);
    free(p->names);
}

static void test_staging(void) {
    char store[PATH_MAX], sandboxes[PATH_MAX];
    snprintf(store, sizeof store, "%s/stage-store", scratch);
    snprintf(sandboxes, sizeof sandboxes, "%s/stage-sandboxes", scratch);
    mkdir(store, 0755);
    mkdir(sandboxes, 0755);
    fk_staging st = {.store = store, .sandboxes = sandboxes};
    fk_runner r;
    fk_runner_init(&r, 1 << 16, scratch);
    fk_exec x;

    const char *ids[] = {"a/x.fits", "b/y", "c/x.fits"};
    const char *names[] = {"", "diffs/", ""};
    fk_spec s = with_inputs("true", ids, names, 3);
    fk_staging_run(&st, &r, 1, &s, NULL, 0, 0, &x);
    CHECK(x.status == FK_FETCH_FAILED && (x.flags & FK_FLAG_PERMANENT)
          && strstr(x.detail.s, "inputs[2] would be staged as 'x.fits', like inputs[0]"), "one name twice: %d %s",
          x.status, x.detail.s);
    fk_exec_free(&x);
    fk_spec_free(&s);

    const char *dids[] = {"d/1", "e/diffs"};
    const char *dnames[] = {"diffs/", ""};
    s = with_inputs("true", dids, dnames, 2);
    fk_staging_run(&st, &r, 2, &s, NULL, 0, 0, &x);
    CHECK(x.status == FK_FETCH_FAILED
          && strstr(x.detail.s, "inputs[1] would be staged as 'diffs', the directory inputs[0] goes into"),
          "a file where a directory goes: %d %s", x.status, x.detail.s);
    fk_exec_free(&x);
    fk_spec_free(&s);

    /* 1,200 inputs into parts/ and beside it: no clash among them, each where its name says, and
     * FALKON_INPUTS lists every one in order */
    enum { MANY = 1200 };
    parts g = store_parts(store, "g", MANY, 1);
    s = with_inputs("ls parts | wc -l; cat parts/part-1199; echo; echo $FALKON_INPUTS | tr : '\\n' | wc -l; "
                    "echo $FALKON_INPUTS | tr : '\\n' | tail -n 1",
                    (const char *const *)g.ids, g.names, MANY);
    fk_staging_run(&st, &r, 3, &s, NULL, 0, 0, &x);
    char want[PATH_MAX];
    snprintf(want, sizeof want, "800\ng/part-1199\n1200\n%s/task-3-", sandboxes);
    CHECK(x.status == FK_EXITED && x.exit_code == 0 && x.out.len > strlen(want)
          && memcmp(x.out.s, want, strlen(want)) == 0 && strstr(x.out.s, "/parts/part-1199\n"),
          "1,200 inputs: %d %d '%s' %s", x.status, x.exit_code, x.out.s ? x.out.s : "", x.detail.s ? x.detail.s : "");
    fk_exec_free(&x);
    fk_spec_free(&s);
    free_parts(&g);
    fk_runner_destroy(&r);
}

/* ---- read-only inputs (READ_ONLY): given in place where this executor can, else copied ---- */

/* Appends an extension to s: tag, the bytes of b (fk_spec_free frees them). */
static void add_ext(fk_spec *s, uint16_t tag, fk_buf *b) {
    s->ext.items = realloc(s->ext.items, (s->ext.n + 1) * sizeof *s->ext.items);
    s->ext.items[s->ext.n].tag = tag;
    s->ext.items[s->ext.n].value.s = (char *)b->data;
    s->ext.items[s->ext.n].value.len = b->len;
    s->ext.n++;
}

/* READ_ONLY marking inputs first..first+n-1. */
static void mark_read_only(fk_spec *s, uint16_t first, uint16_t n) {
    fk_buf b;
    fk_buf_init(&b);
    fk_buf_u16(&b, n);
    for (uint16_t i = 0; i < n; i++) {
        fk_buf_u16(&b, (uint16_t)(first + i));
    }
    add_ext(s, FK_EXT_READ_ONLY, &b);
}

static void test_read_only_inputs(void) {
    char store[PATH_MAX], sandboxes[PATH_MAX], path[PATH_MAX];
    snprintf(store, sizeof store, "%s/ro-store", scratch);
    snprintf(sandboxes, sizeof sandboxes, "%s/ro-sandboxes", scratch);
    mkdir(store, 0755);
    mkdir(sandboxes, 0755);
    snprintf(path, sizeof path, "%s/data", store);
    write_file(path, "kept\n", 5);
    struct stat stored;
    CHECK(stat(path, &stored) == 0, "the stored file");
    int in_place = fk_binds_available(sandboxes);
    printf("read-only inputs here: %s\n", in_place ? "given in place (read-only bind mounts)" : "copied");
    fk_staging st = {.store = store, .sandboxes = sandboxes};
    fk_runner r;
    fk_runner_init(&r, 1 << 16, scratch);
    fk_exec x;

    /* the task reads it; its write, truncation and removal fail in place (for root too), or change only
     * its own copy; the stored file stays as it was either way, and the other input is a copy of its own */
    const char *ids[] = {"data", "data"};
    const char *names[] = {"ro.txt", "rw.txt"};
    fk_spec s = with_inputs("cat ro.txt; (echo X >> ro.txt) 2>/dev/null && echo wrote || echo refused; "
                            "rm -f ro.txt 2>/dev/null; stat -c %i ro.txt rw.txt; echo Y >> rw.txt", ids, names, 2);
    mark_read_only(&s, 0, 1);
    fk_staging_run(&st, &r, 1, &s, NULL, 0, 0, &x);
    char want[256];
    snprintf(want, sizeof want, "kept\nrefused\n%llu\n", (unsigned long long)stored.st_ino);
    if (in_place) { /* the mount is the stored file itself: no copy */
        CHECK(x.status == FK_EXITED && x.exit_code == 0 && x.out.s && strncmp(x.out.s, want, strlen(want)) == 0,
              "in place: %d %d '%s' %s", x.status, x.exit_code, x.out.s ? x.out.s : "", x.detail.s ? x.detail.s : "");
    } else {
        CHECK(x.status == FK_EXITED && x.exit_code != 0, "copied: removed, so stat fails: %d %d '%s'", x.status,
              x.exit_code, x.out.s ? x.out.s : "");
    }
    CHECK(x.out.s && strstr(x.out.s, in_place ? "refused" : "wrote"), "the write: '%s'", x.out.s ? x.out.s : "");
    fk_exec_free(&x);
    fk_spec_free(&s);
    char got[16] = {0};
    FILE *f = fopen(path, "r");
    CHECK(f && fread(got, 1, sizeof got - 1, f) == 5 && strcmp(got, "kept\n") == 0, "the stored file: '%s'", got);
    if (f) {
        fclose(f);
    }

    /* more than FK_MAX_BINDS read-only inputs: that many in place, the rest copied, all readable */
    enum { MANY = FK_MAX_BINDS + 44 };
    parts m = store_parts(store, "m", MANY, 0);
    s = with_inputs("n=0; w=0; for f in parts/*; do grep -q part- $f && n=$((n+1)); [ -w $f ] || w=$((w+1)); done; "
                    "echo $n $w", (const char *const *)m.ids, m.names, MANY);
    mark_read_only(&s, 0, MANY);
    fk_staging_run(&st, &r, 2, &s, NULL, 0, 0, &x);
    snprintf(want, sizeof want, "%d %d\n", MANY, in_place ? FK_MAX_BINDS : 0);
    CHECK(x.status == FK_EXITED && x.exit_code == 0 && x.out.s && strcmp(x.out.s, want) == 0,
          "%d read-only inputs: '%s' want '%s' (%s)", MANY, x.out.s ? x.out.s : "", want, x.detail.s ? x.detail.s : "");
    fk_exec_free(&x);
    fk_spec_free(&s);
    free_parts(&m);

    /* an output where a read-only input is given, and a mark past the inputs: refused before anything runs */
    const char *one[] = {"data"};
    const char *one_name[] = {"in.txt"};
    s = with_inputs("sort -o in.txt in.txt", one, one_name, 1);
    mark_read_only(&s, 0, 1);
    fk_buf b;
    fk_buf_init(&b);
    fk_buf_u16(&b, 1);
    fk_buf_blob(&b, "in.txt", 6);
    fk_buf_blob(&b, "sorted", 6);
    add_ext(&s, FK_EXT_OUTPUTS, &b);
    fk_staging_run(&st, &r, 3, &s, NULL, 0, 0, &x);
    CHECK(x.status == FK_FETCH_FAILED && (x.flags & FK_FLAG_PERMANENT) && x.detail.s
          && strstr(x.detail.s, "outputs[0] 'in.txt' is the path of read-only inputs[0]"), "clash: %d %s", x.status,
          x.detail.s ? x.detail.s : "");
    fk_exec_free(&x);
    fk_spec_free(&s);
    s = with_inputs("true", one, one_name, 1);
    mark_read_only(&s, 1, 1);
    fk_staging_run(&st, &r, 4, &s, NULL, 0, 0, &x);
    CHECK(x.status == FK_FETCH_FAILED && x.detail.s && strstr(x.detail.s, "readOnly[0]: input 1 does not exist"),
          "a mark past the inputs: %d %s", x.status, x.detail.s ? x.detail.s : "");
    fk_exec_free(&x);
    fk_spec_free(&s);
    fk_runner_destroy(&r);
}

/* ---- the store's links: what a source names is checked on what was opened ---- */

static void test_store_links(void) {
    char store[PATH_MAX], sandboxes[PATH_MAX], path[PATH_MAX], outside[PATH_MAX];
    snprintf(store, sizeof store, "%s/links-store", scratch);
    snprintf(sandboxes, sizeof sandboxes, "%s/links-sandboxes", scratch);
    snprintf(outside, sizeof outside, "%s/links-secret", scratch);
    mkdir(store, 0755);
    mkdir(sandboxes, 0755);
    write_file(outside, "secret\n", 7);
    snprintf(path, sizeof path, "%s/data", store);
    write_file(path, "kept\n", 5);
    snprintf(path, sizeof path, "%s/out", store);
    CHECK(symlink(outside, path) == 0, "a link out of the store");
    char inside[PATH_MAX];
    snprintf(inside, sizeof inside, "%s/data", store);
    snprintf(path, sizeof path, "%s/in", store);
    CHECK(symlink(inside, path) == 0, "an absolute link within the store");
    snprintf(path, sizeof path, "%s/fifo", store);
    CHECK(mkfifo(path, 0600) == 0, "a FIFO in the store");
    fk_staging st = {.store = store, .sandboxes = sandboxes};
    fk_runner r;
    fk_runner_init(&r, 1 << 16, scratch);
    fk_exec x;
    for (int ro = 0; ro < 2; ro++) { /* copied, and given in place (or copied where it cannot be) */
        const char *ids[][1] = {{"out"}, {"in"}, {"fifo"}};
        const char *names[] = {"x"};
        for (int k = 0; k < 3; k++) {
            fk_spec s = with_inputs("cat x", ids[k], names, 1);
            if (ro) {
                mark_read_only(&s, 0, 1);
            }
            fk_staging_run(&st, &r, (uint64_t)(10 + k), &s, NULL, 0, 0, &x);
            if (k == 0) {
                CHECK(x.status == FK_FETCH_FAILED && (x.flags & FK_FLAG_PERMANENT) && x.detail.s
                      && strstr(x.detail.s, "outside the shared store root") && !strstr(x.out.s ? x.out.s : "", "secret"),
                      "a link out (read-only %d): %d %s", ro, x.status, x.detail.s ? x.detail.s : "");
            } else if (k == 1) {
                CHECK(x.status == FK_EXITED && x.exit_code == 0 && x.out.s && strcmp(x.out.s, "kept\n") == 0,
                      "a link within (read-only %d): %d '%s' %s", ro, x.status, x.out.s ? x.out.s : "",
                      x.detail.s ? x.detail.s : "");
            } else {
                CHECK(x.status == FK_FETCH_FAILED && x.detail.s && strstr(x.detail.s, "does not exist in the shared store"),
                      "a FIFO, never opened for reading (read-only %d): %d %s", ro, x.status, x.detail.s ? x.detail.s : "");
            }
            fk_exec_free(&x);
            fk_spec_free(&s);
        }
    }
    fk_runner_destroy(&r);
}

/* ---- staging in two halves: the slot runs the next task while a thread saves the last one's outputs ---- */

typedef struct {
    fk_staging *st;
    const fk_spec *spec;
    fk_staged *rest;
    fk_exec *x;
} finishing;

static void *finish_elsewhere(void *p) {
    finishing *f = p;
    fk_staging_finish(f->st, f->spec, f->rest, f->x);
    return NULL;
}

/* A spec for /bin/sh -c SCRIPT whose one output, out.txt, is saved as id. */
static fk_spec with_output(const char *script, const char *id) {
    fk_spec s = sh(script, 0);
    fk_buf b; /* OUTPUTS = count:u16 (path:str id:str)* */
    fk_buf_init(&b);
    fk_buf_u16(&b, 1);
    fk_buf_blob(&b, "out.txt", 7);
    fk_buf_blob(&b, id, strlen(id));
    only_ext(&s, FK_EXT_OUTPUTS, &b);
    return s;
}

static int entries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) {
        return -1;
    }
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    }
    closedir(d);
    return n;
}

static void test_staging_halves(void) {
    char store[PATH_MAX], sandboxes[PATH_MAX], saved[PATH_MAX];
    snprintf(store, sizeof store, "%s/halves-store", scratch);
    snprintf(sandboxes, sizeof sandboxes, "%s/halves-sandboxes", scratch);
    snprintf(saved, sizeof saved, "%s/o/out.txt", store);
    mkdir(store, 0755);
    mkdir(sandboxes, 0755);
    fk_staging st = {.store = store, .outputs = store, .sandboxes = sandboxes};
    fk_runner r;
    fk_runner_init(&r, 1 << 16, scratch);
    fk_spec s = with_output("echo made > out.txt", "o/out.txt");
    CHECK(fk_staging_needed(&s), "a task with an output needs staging");

    fk_exec x;
    fk_staged *rest = fk_staging_begin(&st, &r, 7, &s, NULL, 0, 0, &x);
    /* ran, and nothing saved yet: the output is still in the sandbox, and the result still lacks its
     * data statistics */
    CHECK(rest && x.status == FK_EXITED && x.exit_code == 0, "begin: %d %d", x.status, x.exit_code);
    CHECK(access(saved, F_OK) != 0, "the output was saved before finish");
    CHECK(entries(sandboxes) == 1, "the sandbox is gone before finish: %d", entries(sandboxes));
    CHECK(!fk_ext_find(&x.ext, FK_EXT_DATA_STATS), "data statistics before the outputs were saved");

    finishing f = {&st, &s, rest, &x};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, finish_elsewhere, &f) == 0, "no thread");
    pthread_join(t, NULL);
    char got[16] = {0};
    FILE *in = fopen(saved, "r");
    CHECK(in && fread(got, 1, sizeof got - 1, in) == 5 && strcmp(got, "made\n") == 0, "saved: '%s'", got);
    if (in) {
        fclose(in);
    }
    CHECK(x.status == FK_EXITED && fk_ext_find(&x.ext, FK_EXT_DATA_STATS), "finish: %d", x.status);
    CHECK(entries(sandboxes) == 0, "the sandbox outlived finish: %d", entries(sandboxes));
    fk_exec_free(&x);

    /* a task that fails keeps its output where it made it: nothing saved, the sandbox still removed */
    fk_spec_free(&s);
    s = with_output("echo no > out.txt; exit 3", "o/failed.txt");
    rest = fk_staging_begin(&st, &r, 8, &s, NULL, 0, 0, &x);
    CHECK(rest && x.status == FK_EXITED && x.exit_code == 3, "a failing task: %d %d", x.status, x.exit_code);
    fk_staging_finish(&st, &s, rest, &x);
    snprintf(saved, sizeof saved, "%s/o/failed.txt", store);
    CHECK(access(saved, F_OK) != 0 && x.exit_code == 3, "a failed task's output was saved");
    CHECK(entries(sandboxes) == 0, "a failed task's sandbox outlived finish");
    fk_exec_free(&x);
    fk_spec_free(&s);
    fk_runner_destroy(&r);
}

/* ---- a gather from a peer that lies ---- */

typedef struct {
    int listen_fd;
    unsigned char *answer;
    size_t len;
} liar;

/* Answers one request (read to its body's end) with the crafted tar stream. */
static void *lie(void *p) {
    liar *l = p;
    int fd = accept(l->listen_fd, NULL, NULL);
    if (fd < 0) {
        return NULL;
    }
    fk_http_reader r = {.fd = fd};
    char line[FK_HTTP_MAX_HEADER];
    long long length = 0;
    while (fk_http_line(&r, line, sizeof line) > 0) {
        if (strncasecmp(line, "Content-Length:", 15) == 0) {
            length = atoll(line + 15);
        }
    }
    struct counter c = {0, 0};
    char err[128];
    fk_http_body(&r, length, count_bytes, &c, err, sizeof err);
    char head[128];
    int n = snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", l->len);
    fk_send_all(fd, head, (size_t)n);
    fk_send_all(fd, l->answer, l->len);
    close(fd);
    return NULL;
}

/* One tar entry (header, data, padding) appended at *at. */
static void entry(unsigned char *buf, size_t *at, const char *name, const char *data, size_t len) {
    fk_tar_header(buf + *at, name, (int64_t)len);
    memcpy(buf + *at + 512, data, len);
    *at += 512 + (len + 511) / 512 * 512;
}

static void test_gather_from_a_lying_peer(void) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/gather-cache", scratch);
    char err[1024];
    fk_cache *c = fk_cache_open(dir, 1 << 20, NULL, TOKEN, FK_REVALIDATE_NEVER, NULL, NULL, err, sizeof err);
    CHECK(c != NULL, "open: %s", err);
    if (!c) {
        return;
    }
    const char *good = "0123456789";
    char sha[65];
    fk_sha256_hex(good, 10, sha);
    unsigned char *buf = calloc(1, 16 * 1024);
    size_t at = 0;
    char name[100];
    snprintf(name, sizeof name, "0.%s", sha);
    entry(buf, &at, name, good, 10);                 /* as asked: arrives */
    snprintf(name, sizeof name, "1.%s", sha);
    entry(buf, &at, name, "01234567890123456789", 20); /* longer than declared: dropped unread */
    snprintf(name, sizeof name, "7.%s", sha);
    entry(buf, &at, name, good, 10);                 /* answers nothing asked */
    snprintf(name, sizeof name, "2.%064d", 0);
    entry(buf, &at, name, good, 10);                 /* does not match what the peer says it recorded */
    snprintf(name, sizeof name, "0.%s", sha);
    entry(buf, &at, name, good, 10);                 /* the same index again */
    at += 1024;                                      /* the end */
    liar l = {socket(AF_INET, SOCK_STREAM, 0), buf, at};
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    CHECK(bind(l.listen_fd, (struct sockaddr *)&a, sizeof a) == 0 && listen(l.listen_fd, 1) == 0
              && getsockname(l.listen_fd, (struct sockaddr *)&a, &alen) == 0, "listen");
    pthread_t t;
    pthread_create(&t, NULL, lie, &l);
    char peer[64];
    snprintf(peer, sizeof peer, "127.0.0.1:%d", ntohs(a.sin_port));
    fk_input in0 = input("g/0", "g0", 10, "", 0), in1 = input("g/1", "g1", 10, "", 0),
             in2 = input("g/2", "g2", 10, "", 0);
    const fk_input *refs[] = {&in0, &in1, &in2};
    fk_lease out[3];
    size_t got = fk_cache_gather(c, peer, refs, 3, out);
    pthread_join(t, NULL);
    close(l.listen_fd);
    CHECK(got == 1 && out[0].path && out[0].source == FK_SRC_PEER && out[0].moved == 10, "one arrived: %zu", got);
    CHECK(!out[1].path && !out[2].path, "the wrong ones did not");
    if (out[0].path) {
        char copy[PATH_MAX + 16];
        snprintf(copy, sizeof copy, "%s/gathered-0", scratch);
        CHECK(fk_lease_copy(&out[0], copy) == 0, "copy");
        char back[16] = {0};
        FILE *f = fopen(copy, "rb");
        CHECK(f && fread(back, 1, sizeof back, f) == 10 && memcmp(back, good, 10) == 0, "its bytes");
        if (f) {
            fclose(f);
        }
        fk_cache_release(c, &out[0]);
    }
    free(buf);
    free_input(&in0);
    free_input(&in1);
    free_input(&in2);
    fk_cache_close(c);
}

/* ---- named resources: the --resource option, the field, and who holds which device ---- */

static const char *env_of(const fk_spec *s, const char *name) {
    for (size_t i = 0; i < s->env.n; i++) {
        if (!strcmp(s->env.items[i].key.s, name)) {
            return s->env.items[i].value.s;
        }
    }
    return NULL;
}

static void test_resources(void) {
    char err[512];
    fk_resources r;
    memset(&r, 0, sizeof r);
    CHECK(fk_resources_add(&r, "license=2", err, sizeof err) == 0, "a count: %s", err);
    CHECK(fk_resources_add(&r, "gpus=0,1,2", err, sizeof err) == 0, "devices: %s", err);
    CHECK(fk_resources_add(&r, "gpus=3", err, sizeof err) != 0 && strstr(err, "twice"), "twice: %s", err);
    CHECK(fk_resources_add(&r, "GPUs=1", err, sizeof err) != 0 && strstr(err, "[a-z]"), "bad name: %s", err);
    CHECK(fk_resources_add(&r, "cores=1", err, sizeof err) != 0, "reserved name");
    CHECK(fk_resources_add(&r, "fpga=x", err, sizeof err) != 0 && strstr(err, "fpga=[x]"), "not a count: %s", err);
    CHECK(fk_resources_add(&r, "fpga=0,0", err, sizeof err) != 0 && strstr(err, "twice"), "a device twice: %s", err);
    fk_resources_ready(&r, 2);
    char attr[256];
    fk_resources_attribute(&r, attr, sizeof attr);
    CHECK(!strcmp(attr, "gpus=3,license=2"), "attribute, names sorted: %s", attr);

    /* a task asking 2 GPUs and a licence, from the field the Java side writes (golden vector 54's) */
    static const uint8_t field[] = {0, 2, 0, 0, 0, 4, 'g', 'p', 'u', 's', 0, 0, 0, 2,
                                    0, 0, 0, 7, 'l', 'i', 'c', 'e', 'n', 's', 'e', 0, 0, 0, 1};
    fk_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.ext.n = 1;
    spec.ext.items = calloc(1, sizeof(fk_ext));
    spec.ext.items[0].tag = FK_EXT_NAMED_RESOURCES;
    spec.ext.items[0].value = fk_str_dup((const char *)field, sizeof field);
    fk_asked a;
    CHECK(fk_asked_of(&spec, &a, err, sizeof err) == 0 && a.n == 2 && a.amount[0] == 2, "decoded: %s", err);
    CHECK(fk_resources_problem(&r, &a, err, sizeof err) == NULL, "it could be held here");
    CHECK(fk_resources_free(&r, &a), "all free");
    fk_grant g1, g2;
    fk_resources_take(&r, &a, 0, &spec, &g1);
    CHECK(env_of(&spec, "CUDA_VISIBLE_DEVICES") && !strcmp(env_of(&spec, "CUDA_VISIBLE_DEVICES"), "0,1"),
          "its devices: %s", env_of(&spec, "CUDA_VISIBLE_DEVICES"));
    CHECK(!strcmp(env_of(&spec, "FALKON_RESOURCE_GPUS"), "0,1"), "named to it");
    CHECK(!strcmp(env_of(&spec, "FALKON_RESOURCE_LICENSE"), "1"), "its licence");
    CHECK(!fk_resources_free(&r, &a), "one GPU left: a second such task waits");
    fk_asked one = {.n = 1, .amount = {1}};
    strcpy(one.name[0], "gpus");
    CHECK(fk_resources_free(&r, &one), "one GPU is free");
    fk_spec other;
    memset(&other, 0, sizeof other);
    fk_resources_take(&r, &one, 1, &other, &g2);
    CHECK(!strcmp(env_of(&other, "CUDA_VISIBLE_DEVICES"), "2"), "the free one: %s", env_of(&other, "CUDA_VISIBLE_DEVICES"));
    fk_resources_give(&r, &g1);
    fk_resources_give(&r, &g2);
    CHECK(fk_resources_free(&r, &a), "all given back");
    /* slot 1 gets its device again; a task asking none is shown none */
    fk_spec again, plain;
    memset(&again, 0, sizeof again);
    memset(&plain, 0, sizeof plain);
    fk_resources_take(&r, &one, 1, &again, &g2);
    CHECK(!strcmp(env_of(&again, "CUDA_VISIBLE_DEVICES"), "2"), "the slot's own device again");
    fk_asked none = {.n = 0};
    fk_resources_take(&r, &none, 0, &plain, &g1);
    CHECK(env_of(&plain, "CUDA_VISIBLE_DEVICES") && !*env_of(&plain, "CUDA_VISIBLE_DEVICES"), "hidden");
    fk_resources_give(&r, &g1);
    fk_resources_give(&r, &g2);
    fk_asked four = {.n = 1, .amount = {4}};
    strcpy(four.name[0], "gpus");
    CHECK(fk_resources_problem(&r, &four, err, sizeof err) && strstr(err, "needs 4 gpus")
          && strstr(err, "offers 3 gpus, 2 license"), "why not: %s", err);
    /* not the canonical form: refused */
    static const uint8_t unsorted[] = {0, 2, 0, 0, 0, 1, 'b', 0, 0, 0, 1, 0, 0, 0, 1, 'a', 0, 0, 0, 1};
    fk_str_free(&spec.ext.items[0].value);
    spec.ext.items[0].value = fk_str_dup((const char *)unsorted, sizeof unsorted);
    CHECK(fk_asked_of(&spec, &a, err, sizeof err) != 0 && strstr(err, "sorted"), "unsorted: %s", err);
    fk_spec_free(&spec);
    fk_spec_free(&other);
    fk_spec_free(&again);
    fk_spec_free(&plain);
    fk_resources_destroy(&r);
}

/* The GPUs a vendor's tool lists, found on PATH. FAKE nvidia-smi: this machine has no GPU, so a
 * script in its place prints the tool's `-L` lines; what is tested is the finding and the parsing. */
static void test_gpus_found_on_path(void) {
    char *saved_path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    char *saved_cuda = getenv("CUDA_VISIBLE_DEVICES") ? strdup(getenv("CUDA_VISIBLE_DEVICES")) : NULL;
    char *saved_rocr = getenv("ROCR_VISIBLE_DEVICES") ? strdup(getenv("ROCR_VISIBLE_DEVICES")) : NULL;
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("ROCR_VISIBLE_DEVICES");
    char empty[1100], tools[1100], tool[1200], path[2400], attr[256];
    snprintf(empty, sizeof empty, "%s/no-tools", scratch);
    snprintf(tools, sizeof tools, "%s/tools", scratch);
    CHECK(mkdir(empty, 0700) == 0 && mkdir(tools, 0700) == 0, "tool directories");
    snprintf(tool, sizeof tool, "%s/nvidia-smi", tools);
    static const char fake[] = "#!/bin/sh\necho 'GPU 0: FAKE (UUID: GPU-0)'\necho 'GPU 1: FAKE (UUID: GPU-1)'\n";
    write_file(tool, fake, sizeof fake - 1);

    /* not executable: not the tool */
    snprintf(path, sizeof path, "%s:%s", empty, tools);
    setenv("PATH", path, 1);
    CHECK(!fk_on_path("nvidia-smi"), "a file that cannot be run is not found");
    fk_resources r;
    memset(&r, 0, sizeof r);
    fk_resources_ready(&r, 2);
    fk_resources_attribute(&r, attr, sizeof attr);
    CHECK(!strcmp(attr, ""), "no tool, no GPUs: '%s'", attr);
    fk_resources_destroy(&r);

    chmod(tool, 0700);
    CHECK(fk_on_path("nvidia-smi"), "found in PATH's second directory");
    CHECK(!fk_on_path("rocm-smi"), "rocm-smi is not there");
    memset(&r, 0, sizeof r);
    fk_resources_ready(&r, 2);
    fk_resources_attribute(&r, attr, sizeof attr);
    CHECK(!strcmp(attr, "gpus=2"), "the tool's two GPUs: '%s'", attr);
    fk_resources_destroy(&r);

    setenv("PATH", empty, 1);
    CHECK(!fk_on_path("nvidia-smi") && !fk_on_path("sh"), "nothing on a PATH of an empty directory");
    if (saved_path) {
        setenv("PATH", saved_path, 1);
    } else {
        unsetenv("PATH");
    }
    if (saved_cuda) {
        setenv("CUDA_VISIBLE_DEVICES", saved_cuda, 1);
    }
    if (saved_rocr) {
        setenv("ROCR_VISIBLE_DEVICES", saved_rocr, 1);
    }
    free(saved_path);
    free(saved_cuda);
    free(saved_rocr);
}

int main(void) {
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch, sizeof scratch, "%s/falkon-c-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(scratch)) {
        perror("mkdtemp");
        return 2;
    }
    test_hashes();
    test_mkdirs();
    test_input_names();
    test_output_ids();
    test_stats_layout();
    test_pin_decision();
    test_runner();
    test_cache();
    test_gather_from_a_lying_peer();
    test_staging();
    test_read_only_inputs();
    test_store_links();
    test_staging_halves();
    test_resources();
    test_gpus_found_on_path();
    fk_rmtree(scratch);
    printf("unit tests: %d failures\n", check_failures);
    return check_failures ? 1 : 0;
}
