#include "cache.h"

#include "fsutil.h"
#include "hash.h"
#include "log.h"
#include "peer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct fk_entry {
    fk_entry *chain;            /* hash bucket */
    fk_entry *older, *newer;    /* recency list: the victim is the oldest unpinned entry */
    char *key;
    char *id;
    int packed;                 /* the stored form (indexed, served to peers) */
    char *path;
    int64_t size;
    int pins;
};

/* A fetch in progress: later askers for the same key wait for it (single flight). */
typedef struct flight {
    struct flight *next;
    char *key;
    int done;
    int failed;
    int waiters;
    char err[512];
} flight;

struct fk_cache {
    pthread_mutex_t lock;
    pthread_cond_t landed;
    char dir[PATH_MAX];
    char tmp[PATH_MAX];
    char *store_root;
    char *token; /* what peers' cache servers require */
    int64_t capacity;
    int64_t used;
    uint64_t evictions;
    uint64_t seq;
    fk_cache_listener listener;
    void *ctx;
    fk_entry **buckets;
    size_t nbuckets;
    size_t count;
    fk_entry recency;           /* sentinel: recency.newer is the oldest */
    flight *flights;
};

static void fmt(char *err, size_t errlen, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void fmt(char *err, size_t errlen, const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    vsnprintf(err, errlen, f, ap);
    va_end(ap);
}

static char *xstrdup(const char *s) {
    char *d = strdup(s);
    if (!d) {
        abort();
    }
    return d;
}

static size_t hash_of(const char *s) {
    size_t h = 1469598103934665603ULL;
    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    }
    return h;
}

static fk_entry *find(fk_cache *c, const char *key) {
    for (fk_entry *e = c->buckets[hash_of(key) % c->nbuckets]; e; e = e->chain) {
        if (strcmp(e->key, key) == 0) {
            return e;
        }
    }
    return NULL;
}

static void unlink_recency(fk_entry *e) {
    e->older->newer = e->newer;
    e->newer->older = e->older;
}

static void push_newest(fk_cache *c, fk_entry *e) {
    e->newer = &c->recency;
    e->older = c->recency.older;
    c->recency.older->newer = e;
    c->recency.older = e;
}

static void push_oldest(fk_cache *c, fk_entry *e) {
    e->older = &c->recency;
    e->newer = c->recency.newer;
    c->recency.newer->older = e;
    c->recency.newer = e;
}

static void grow(fk_cache *c) {
    size_t n = c->nbuckets * 2;
    fk_entry **b = calloc(n, sizeof *b);
    if (!b) {
        abort();
    }
    for (size_t i = 0; i < c->nbuckets; i++) {
        fk_entry *e = c->buckets[i];
        while (e) {
            fk_entry *next = e->chain;
            size_t k = hash_of(e->key) % n;
            e->chain = b[k];
            b[k] = e;
            e = next;
        }
    }
    free(c->buckets);
    c->buckets = b;
    c->nbuckets = n;
}

static void add(fk_cache *c, fk_entry *e) {
    if (c->count + 1 > c->nbuckets) {
        grow(c);
    }
    size_t k = hash_of(e->key) % c->nbuckets;
    e->chain = c->buckets[k];
    c->buckets[k] = e;
    c->count++;
    push_newest(c, e);
}

static void drop(fk_cache *c, fk_entry *e) {
    fk_entry **p = &c->buckets[hash_of(e->key) % c->nbuckets];
    while (*p != e) {
        p = &(*p)->chain;
    }
    *p = e->chain;
    c->count--;
    unlink_recency(e);
}

static void free_entry(fk_entry *e) {
    free(e->key);
    free(e->id);
    free(e->path);
    free(e);
}

fk_cache *fk_cache_open(const char *dir, int64_t capacity, const char *store_root, const char *token,
                        fk_cache_listener listener, void *ctx, char *err, size_t errlen) {
    if (capacity <= 0) {
        fmt(err, errlen, "cache capacity must be positive");
        return NULL;
    }
    if (strlen(dir) > PATH_MAX / 4) {
        fmt(err, errlen, "the cache directory path is too long (over %d bytes)", PATH_MAX / 4);
        return NULL;
    }
    fk_cache *c = calloc(1, sizeof *c);
    if (!c) {
        abort();
    }
    snprintf(c->dir, sizeof c->dir, "%s/objects", dir);
    snprintf(c->tmp, sizeof c->tmp, "%s/incoming", dir);
    fk_rmtree(c->dir);
    fk_rmtree(c->tmp);
    if (fk_mkdirs(c->dir) != 0 || fk_mkdirs(c->tmp) != 0) {
        fmt(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        free(c);
        return NULL;
    }
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->landed, NULL);
    c->store_root = store_root ? xstrdup(store_root) : NULL;
    c->token = xstrdup(token ? token : "");
    c->capacity = capacity;
    c->listener = listener;
    c->ctx = ctx;
    c->nbuckets = 64;
    c->buckets = calloc(c->nbuckets, sizeof *c->buckets);
    if (!c->buckets) {
        abort();
    }
    c->recency.newer = c->recency.older = &c->recency;
    return c;
}

void fk_cache_close(fk_cache *c) {
    for (size_t i = 0; i < c->nbuckets; i++) {
        fk_entry *e = c->buckets[i];
        while (e) {
            fk_entry *next = e->chain;
            free_entry(e);
            e = next;
        }
    }
    free(c->buckets);
    fk_rmtree(c->dir);
    fk_rmtree(c->tmp);
    free(c->store_root);
    free(c->token);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->landed);
    free(c);
}

int64_t fk_cache_capacity(const fk_cache *c) {
    return c->capacity;
}

static void pin(fk_entry *e, fk_lease *out, int source, int64_t moved) {
    e->pins++;
    out->entry = e;
    out->path = e->path;
    out->size = e->size;
    out->source = source;
    out->moved = moved;
}

void fk_cache_release(fk_cache *c, fk_lease *l) {
    if (!l->entry) {
        return;
    }
    pthread_mutex_lock(&c->lock);
    l->entry->pins--;
    pthread_mutex_unlock(&c->lock);
    l->entry = NULL;
}

static void next_tmp(fk_cache *c, char *out, size_t len, char kind) {
    pthread_mutex_lock(&c->lock);
    uint64_t n = ++c->seq;
    pthread_mutex_unlock(&c->lock);
    snprintf(out, len, "%s/%c%llu", c->tmp, kind, (unsigned long long)n);
}

/* Makes room and moves file in under its hashed name; returns it pinned in out, or -1. */
static int insert(fk_cache *c, const char *key, const char *id, int packed, const char *file, int64_t size,
                  int source, int64_t moved, fk_lease *out, char *err, size_t errlen) {
    char hex[65];
    fk_sha256_hex(key, strlen(key), hex);
    char target[PATH_MAX];
    snprintf(target, sizeof target, "%s/%s", c->dir, hex);
    fk_entry *victims = NULL;
    pthread_mutex_lock(&c->lock);
    if (size > c->capacity) {
        pthread_mutex_unlock(&c->lock);
        fk_rmtree(file);
        fmt(err, errlen, "%s (%lld bytes) is larger than the whole cache (%lld bytes)", id, (long long)size,
            (long long)c->capacity);
        return -1;
    }
    while (c->used + size > c->capacity) {
        fk_entry *v = c->recency.newer;
        while (v != &c->recency && v->pins > 0) {
            v = v->newer;
        }
        if (v == &c->recency) {
            /* put back what was taken out, in its old places */
            while (victims) {
                fk_entry *next = victims->chain;
                add(c, victims);
                unlink_recency(victims);
                push_oldest(c, victims);
                c->used += victims->size;
                c->evictions--;
                victims = next;
            }
            int64_t busy = c->used;
            pthread_mutex_unlock(&c->lock);
            fk_rmtree(file);
            fmt(err, errlen, "no room for %s (%lld bytes): the other %lld MiB of the cache are in use by running tasks",
                id, (long long)size, (long long)(busy >> 20));
            return -1;
        }
        drop(c, v);
        c->used -= v->size;
        c->evictions++;
        v->chain = victims;
        victims = v;
    }
    /* victims' files move aside under the lock: a new object with the same hashed name (the same
     * key fetched again) must never be deleted by a late clean-up */
    for (fk_entry *v = victims; v; v = v->chain) {
        char aside[PATH_MAX];
        snprintf(aside, sizeof aside, "%s/d%llu", c->tmp, (unsigned long long)++c->seq);
        if (rename(v->path, aside) == 0) {
            free(v->path);
            v->path = xstrdup(aside);
        }
    }
    if (rename(file, target) != 0) {
        int e = errno;
        while (victims) {
            fk_entry *next = victims->chain;
            fk_rmtree(victims->path);
            free_entry(victims);
            victims = next;
        }
        pthread_mutex_unlock(&c->lock);
        fk_rmtree(file);
        fmt(err, errlen, "cannot store %s in the cache: %s", id, strerror(e));
        return -1;
    }
    struct stat st;
    if (lstat(target, &st) == 0 && S_ISREG(st.st_mode)) {
        chmod(target, 0444); /* write-once: tasks read it through a link, never change it */
    }
    fk_entry *e = calloc(1, sizeof *e);
    if (!e) {
        abort();
    }
    e->key = xstrdup(key);
    e->id = xstrdup(id);
    e->packed = packed;
    e->path = xstrdup(target);
    e->size = size;
    add(c, e);
    c->used += size;
    pin(e, out, source, moved);
    pthread_mutex_unlock(&c->lock);
    while (victims) {
        fk_entry *next = victims->chain;
        fk_rmtree(victims->path);
        if (victims->packed && c->listener) {
            c->listener(c->ctx, victims->id, -1);
        }
        free_entry(victims);
        victims = next;
    }
    if (packed && c->listener) {
        c->listener(c->ctx, id, size);
    }
    return 0;
}

/* ---- verified copies ---- */

typedef struct {
    int fd;
    fk_hash hash;
    int hashing;
    int64_t n;
    char *err;
    size_t errlen;
} copy_sink;

static int to_file(void *ctx, const void *data, size_t len) {
    copy_sink *s = ctx;
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(s->fd, p, left);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            fmt(s->err, s->errlen, "cannot write the copy: %s", strerror(errno));
            return -1;
        }
        p += w;
        left -= (size_t)w;
    }
    if (s->hashing) {
        fk_hash_update(&s->hash, data, len);
    }
    s->n += (int64_t)len;
    return 0;
}

/* Lexically resolves src under root; -1 if it would leave the root. */
static int under_root(const char *root, const char *src, char *out, size_t len) {
    char parts[PATH_MAX];
    snprintf(parts, sizeof parts, "%s", src);
    char *stack[PATH_MAX / 2];
    int depth = 0;
    for (char *save = NULL, *p = strtok_r(parts, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
        if (strcmp(p, ".") == 0) {
            continue;
        }
        if (strcmp(p, "..") == 0) {
            if (depth == 0) {
                return -1;
            }
            depth--;
            continue;
        }
        stack[depth++] = p;
    }
    size_t k = (size_t)snprintf(out, len, "%s", root);
    for (int i = 0; i < depth && k < len; i++) {
        k += (size_t)snprintf(out + k, len - k, "/%s", stack[i]);
    }
    return k < len ? 0 : -1;
}

static int percent_decode(char *s) {
    char *w = s;
    for (char *r = s; *r; r++) {
        if (*r == '%' && r[1] && r[2]) {
            char hex[3] = {r[1], r[2], 0};
            char *end;
            long v = strtol(hex, &end, 16);
            if (*end) {
                return -1;
            }
            *w++ = (char)v;
            r += 2;
        } else {
            *w++ = *r;
        }
    }
    *w = 0;
    return 0;
}

/* Opens a store source that is a file; -1 with err. */
static int open_store_file(const char *root, const char *src, char *err, size_t errlen) {
    char path[PATH_MAX];
    if (strncmp(src, "file:", 5) == 0) {
        const char *p = src + 5;
        if (strncmp(p, "//", 2) == 0) {
            p += 2;
            const char *slash = strchr(p, '/'); /* skip an authority (file://host/path) */
            p = slash ? slash : "";
        }
        snprintf(path, sizeof path, "%s", p);
        if (path[0] != '/' || percent_decode(path) != 0) {
            fmt(err, errlen, "'%s' is not a file: URL with an absolute path", src);
            return -1;
        }
    } else if (src[0] == '/') {
        snprintf(path, sizeof path, "%s", src);
    } else if (!root) {
        fmt(err, errlen, "'%s' is a relative source but the executor has no shared store root (--store DIR)", src);
        return -1;
    } else if (under_root(root, src, path, sizeof path) != 0) {
        fmt(err, errlen, "'%s' leaves the shared store root", src);
        return -1;
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        fmt(err, errlen, "%s does not exist in the shared store", path);
        return -1;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fmt(err, errlen, "cannot read %s: %s", path, strerror(errno));
    }
    return fd;
}

/* Copies from a peer (peer != NULL) or the shared store into out, verifying size and checksum.
 * Returns the bytes copied, or -1 with err. */
static int64_t copy_verified(const char *root, const char *peer, const char *token, const fk_input *ref,
                             const char *out, char *err,
                             size_t errlen) {
    copy_sink s;
    memset(&s, 0, sizeof s);
    s.err = err;
    s.errlen = errlen;
    const char *sum = ref->checksum.s;
    if (ref->checksum.len) {
        int md5 = strncmp(sum, "md5:", 4) == 0;
        if (!md5 && strncmp(sum, "sha256:", 7) != 0) {
            fmt(err, errlen, "checksum of %s must be sha256:HEX or md5:HEX, got %s", ref->id.s, sum);
            return -1;
        }
        fk_hash_init(&s.hash, md5);
        s.hashing = 1;
    }
    char from[600];
    if (peer) {
        snprintf(from, sizeof from, "peer %s", peer);
    } else {
        snprintf(from, sizeof from, "the shared store (%s)", ref->source.s);
    }
    s.fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (s.fd < 0) {
        fmt(err, errlen, "cannot create %s: %s", out, strerror(errno));
        return -1;
    }
    int rc;
    if (peer || strncmp(ref->source.s, "http://", 7) == 0 || strncmp(ref->source.s, "https://", 8) == 0) {
        char *url;
        if (peer) {
            char *enc = fk_url_encode(ref->id.s);
            size_t n = strlen(peer) + strlen(enc) + 32;
            url = malloc(n);
            if (!url) {
                abort();
            }
            snprintf(url, n, "http://%s/objects?id=%s", peer, enc);
            free(enc);
        } else {
            url = xstrdup(ref->source.s);
        }
        rc = fk_http_get(url, peer ? token : NULL, to_file, &s, err, errlen);
        free(url);
        rc = rc == 0 ? 0 : -1;
    } else {
        int in = open_store_file(root, ref->source.s, err, errlen);
        rc = in < 0 ? -1 : 0;
        char buf[65536];
        while (rc == 0) {
            ssize_t n = read(in, buf, sizeof buf);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n < 0) {
                fmt(err, errlen, "reading %s: %s", ref->source.s, strerror(errno));
                rc = -1;
            } else if (n == 0) {
                break;
            } else {
                rc = to_file(&s, buf, (size_t)n);
            }
        }
        if (in >= 0) {
            close(in);
        }
    }
    if (close(s.fd) != 0 && rc == 0) {
        fmt(err, errlen, "cannot write the copy: %s", strerror(errno));
        rc = -1;
    }
    if (rc != 0) {
        return -1;
    }
    if (ref->size >= 0 && s.n != ref->size) {
        fmt(err, errlen, "got %lld bytes from %s, expected %lld", (long long)s.n, from, (long long)ref->size);
        return -1;
    }
    if (s.hashing) {
        char got[65];
        fk_hash_hex(&s.hash, got);
        const char *want = strchr(sum, ':') + 1;
        if (strcasecmp(got, want) != 0) {
            fmt(err, errlen, "checksum mismatch from %s: %.*s %s, expected %s", from, (int)(want - 1 - sum), sum, got,
                want);
            return -1;
        }
    }
    return s.n;
}

int64_t fk_store_copy(const char *store_root, const fk_input *ref, const char *out, char *err, size_t errlen) {
    int64_t n = copy_verified(store_root, NULL, NULL, ref, out, err, errlen);
    if (n < 0) {
        unlink(out);
    }
    return n;
}

/* ---- unpacking, with the system's gzip and tar ---- */

static int run_tool(char *const argv[], const char *stdout_path, char *err, size_t errlen) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (stdout_path) {
        posix_spawn_file_actions_addopen(&fa, 1, stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    } else {
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    }
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        fmt(err, errlen, "cannot run %s: %s", argv[0], strerror(rc));
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            fmt(err, errlen, "waiting for %s: %s", argv[0], strerror(errno));
            return -1;
        }
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fmt(err, errlen, "%s failed (status %d): the archive is damaged or not of that kind", argv[0],
            WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
        return -1;
    }
    return 0;
}

int64_t fk_unpack(const char *packed, int mode, const char *target, char *err, size_t errlen) {
    int rc;
    if (mode == 1) {
        char *argv[] = {"gzip", "-d", "-c", "--", (char *)packed, NULL};
        rc = run_tool(argv, target, err, errlen);
    } else if (mode == 2 || mode == 3) {
        if (fk_mkdirs(target) != 0) {
            fmt(err, errlen, "cannot create %s: %s", target, strerror(errno));
            return -1;
        }
        /* GNU tar refuses members that would land outside the directory; links are removed below,
         * as the Java unpacker skips them: data objects are plain files */
        char *argv[] = {"tar", mode == 3 ? "-xzf" : "-xf", (char *)packed, "-C", (char *)target, "--no-same-owner",
                        "--no-same-permissions", NULL};
        rc = run_tool(argv, NULL, err, errlen);
    } else {
        fmt(err, errlen, "nothing to unpack for mode %d", mode);
        return -1;
    }
    if (rc != 0) {
        fk_rmtree(target);
        return -1;
    }
    int64_t n = fk_tree_size_unlinking(target);
    if (n < 0) {
        fmt(err, errlen, "cannot measure %s: %s", target, strerror(errno));
        fk_rmtree(target);
    }
    return n;
}

/* ---- leases ---- */

static const char *form_name(int unpack) {
    static const char *names[] = {"none", "gzip", "tar", "tar_gz"};
    return names[unpack & 3];
}

static int fetch_packed(fk_cache *c, const fk_input *ref, const fk_str *peers, size_t npeers, fk_lease *out,
                        char *err, size_t errlen) {
    char tried[2048] = "";
    size_t k = 0;
    char why[600];
    char path[PATH_MAX];
    for (size_t i = 0; i < npeers; i++) {
        next_tmp(c, path, sizeof path, 'p');
        int64_t n = copy_verified(c->store_root, peers[i].s, c->token, ref, path, why, sizeof why);
        if (n >= 0) {
            return insert(c, ref->id.s, ref->id.s, 1, path, n, FK_SRC_PEER, n, out, err, errlen);
        }
        /* a stale hint, a peer gone, a bad copy: fall through to the next source */
        unlink(path);
        k += (size_t)snprintf(tried + k, k < sizeof tried ? sizeof tried - k : 0, "peer %s: %s; ", peers[i].s, why);
        k = k < sizeof tried ? k : sizeof tried - 1;
    }
    next_tmp(c, path, sizeof path, 's');
    int64_t n = copy_verified(c->store_root, NULL, NULL, ref, path, why, sizeof why);
    if (n < 0) {
        unlink(path);
        fmt(err, errlen, "cannot fetch %s (%sthe shared store (%s): %s)", ref->id.s, tried, ref->source.s, why);
        return -1;
    }
    return insert(c, ref->id.s, ref->id.s, 1, path, n, FK_SRC_STORE, n, out, err, errlen);
}

static int fetch(fk_cache *c, const char *key, const fk_input *ref, const fk_str *peers, size_t npeers,
                 fk_lease *out, char *err, size_t errlen) {
    if (ref->unpack == 0) {
        return fetch_packed(c, ref, peers, npeers, out, err, errlen);
    }
    fk_input packed = *ref;
    packed.unpack = 0;
    fk_lease pl;
    if (fk_cache_lease(c, &packed, peers, npeers, &pl, err, errlen) != 0) {
        return -1;
    }
    char path[PATH_MAX];
    next_tmp(c, path, sizeof path, 'u');
    char why[512];
    int64_t size = fk_unpack(pl.path, ref->unpack, path, why, sizeof why);
    int rc;
    if (size < 0) {
        fmt(err, errlen, "cannot unpack %s as %s: %s", ref->id.s, form_name(ref->unpack), why);
        rc = -1;
    } else {
        rc = insert(c, key, ref->id.s, 0, path, size, pl.source, pl.moved, out, err, errlen);
    }
    fk_cache_release(c, &pl);
    return rc;
}

int fk_cache_lease(fk_cache *c, const fk_input *ref, const fk_str *peers, size_t npeers, fk_lease *out, char *err,
                   size_t errlen) {
    char key[PATH_MAX];
    if (ref->unpack == 0) {
        snprintf(key, sizeof key, "%s", ref->id.s);
    } else {
        snprintf(key, sizeof key, "%s#%s", ref->id.s, form_name(ref->unpack));
    }
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&c->lock);
    for (;;) {
        fk_entry *e = find(c, key);
        if (e) {
            unlink_recency(e);
            push_newest(c, e);
            pin(e, out, FK_SRC_LOCAL, 0);
            pthread_mutex_unlock(&c->lock);
            return 0;
        }
        flight *f = c->flights;
        while (f && strcmp(f->key, key) != 0) {
            f = f->next;
        }
        if (!f) {
            break;
        }
        /* someone else fetches it: share their copy */
        f->waiters++;
        while (!f->done) {
            pthread_cond_wait(&c->landed, &c->lock);
        }
        f->waiters--;
        int failed = f->failed;
        if (failed) {
            snprintf(err, errlen, "%s", f->err);
        }
        if (f->waiters == 0) {
            free(f->key);
            free(f);
        }
        if (failed) {
            pthread_mutex_unlock(&c->lock);
            return -1;
        }
    }
    flight *mine = calloc(1, sizeof *mine);
    if (!mine) {
        abort();
    }
    mine->key = xstrdup(key);
    mine->next = c->flights;
    c->flights = mine;
    pthread_mutex_unlock(&c->lock);

    int rc = fetch(c, key, ref, peers, npeers, out, err, errlen);

    pthread_mutex_lock(&c->lock);
    flight **p = &c->flights;
    while (*p != mine) {
        p = &(*p)->next;
    }
    *p = mine->next;
    mine->done = 1;
    mine->failed = rc != 0;
    if (rc != 0) {
        snprintf(mine->err, sizeof mine->err, "%s", err);
    }
    if (mine->waiters == 0) {
        free(mine->key);
        free(mine);
    } else {
        pthread_cond_broadcast(&c->landed);
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int fk_cache_register(fk_cache *c, const char *id, const char *file, char *err, size_t errlen) {
    char staged[PATH_MAX];
    next_tmp(c, staged, sizeof staged, 'o');
    struct stat st;
    if (stat(file, &st) != 0 || fk_move(file, staged) != 0) {
        fmt(err, errlen, "cannot register output %s as %s: %s", file, id, strerror(errno));
        return -1;
    }
    pthread_mutex_lock(&c->lock);
    int held = find(c, id) != NULL;
    pthread_mutex_unlock(&c->lock);
    if (held) {
        unlink(staged); /* write-once: the id already names these bytes */
        return 0;
    }
    fk_lease l;
    if (insert(c, id, id, 1, staged, st.st_size, FK_SRC_LOCAL, 0, &l, err, errlen) != 0) {
        return -1;
    }
    fk_cache_release(c, &l);
    return 0;
}

int fk_cache_peek(fk_cache *c, const char *id, fk_lease *out) {
    pthread_mutex_lock(&c->lock);
    fk_entry *e = find(c, id);
    int ok = e && e->packed;
    if (ok) {
        pin(e, out, FK_SRC_LOCAL, 0);
    }
    pthread_mutex_unlock(&c->lock);
    return ok ? 0 : -1;
}

size_t fk_cache_contents(fk_cache *c, fk_cached **out) {
    pthread_mutex_lock(&c->lock);
    fk_cached *list = calloc(c->count, sizeof *list);
    if (!list && c->count) {
        abort();
    }
    size_t n = 0;
    for (fk_entry *e = c->recency.newer; e != &c->recency; e = e->newer) {
        if (e->packed) {
            list[n].id = fk_str_of(e->id);
            list[n++].size = e->size;
        }
    }
    pthread_mutex_unlock(&c->lock);
    *out = list;
    return n;
}

void fk_cached_free(fk_cached *list, size_t n) {
    for (size_t i = 0; i < n; i++) {
        fk_str_free(&list[i].id);
    }
    free(list);
}
