#include "cache.h"

#include "fsutil.h"
#include "hash.h"
#include "log.h"
#include "http.h"

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
    char *path;                 /* moved aside (under the lock) when it leaves the cache while in use */
    int64_t size;
    int64_t packed_size;        /* the stored form's size (for an unpacked form: its archive's) */
    char sha256[65];            /* the stored form's SHA-256, recorded on arrival */
    char md5[33];               /* its MD5, once a task declared one ("" until then) */
    int64_t stamp_size;         /* the store file when copied: size and mtime (ns); -1: none */
    int64_t stamp_mtime;
    int pins;
    int retired;                /* out of the cache, still pinned: freed by the last release */
};

/* A fetch in progress: later askers for the same key wait for it (single flight). */
typedef struct flight {
    struct flight *next;
    char *key;
    int done;
    int failed;
    int waiters;
    int permanent;
    char err[512];
} flight;

struct fk_cache {
    pthread_mutex_t lock;
    int revalidate;             /* enum fk_revalidate */
    uint64_t refetches;
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

static void free_entry(fk_entry *e);
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


fk_cache *fk_cache_open(const char *dir, int64_t capacity, const char *store_root, const char *token, int revalidate,
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
    if (fk_mkdirs_mode(c->dir, 0700) != 0 || fk_mkdirs_mode(c->tmp, 0700) != 0) { /* task data: owner only */
        fmt(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        free(c);
        return NULL;
    }
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->landed, NULL);
    c->store_root = store_root ? xstrdup(store_root) : NULL;
    c->token = xstrdup(token ? token : "");
    c->capacity = capacity;
    c->revalidate = revalidate;
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
    memset(out, 0, sizeof *out);
    out->entry = e;
    out->path = e->path;
    out->size = e->size;
    out->source = source;
    out->moved = moved;
    out->cached = 1;
    snprintf(out->sha256, sizeof out->sha256, "%s", e->packed ? e->sha256 : "");
}

static void free_entry(fk_entry *e) {
    free(e->key);
    free(e->id);
    free(e->path);
    free(e);
}

/* Takes an entry out of the cache (lock held): off the books, its file moved aside at once so that
 * a new copy of the same key can take its name. Returns 1 when nothing holds it any more (the
 * caller deletes its file and frees it, outside the lock), 0 when the last release will. */
static int retire(fk_cache *c, fk_entry *e) {
    drop(c, e);
    c->used -= e->size;
    e->retired = 1;
    char aside[PATH_MAX];
    snprintf(aside, sizeof aside, "%s/d%llu", c->tmp, (unsigned long long)++c->seq);
    if (rename(e->path, aside) == 0) {
        free(e->path);
        e->path = xstrdup(aside);
    }
    return e->pins == 0;
}

static void forget(fk_cache *c, fk_entry *e, int tell) {
    fk_rmtree(e->path);
    if (tell && e->packed && c->listener) {
        c->listener(c->ctx, e->id, -1);
    }
    free_entry(e);
}

void fk_cache_release(fk_cache *c, fk_lease *l) {
    if (l->own) {
        fk_rmtree(l->own); /* a read-through copy not given to a task */
        free(l->own);
        l->own = NULL;
    }
    if (!l->entry) {
        return;
    }
    pthread_mutex_lock(&c->lock);
    fk_entry *e = l->entry;
    int last = --e->pins == 0 && e->retired;
    pthread_mutex_unlock(&c->lock);
    if (last) {
        forget(c, e, 0);
    }
    l->entry = NULL;
}

int fk_lease_copy(fk_lease *l, const char *target) {
    if (l->own) {
        int rc = fk_move(l->own, target) == 0 ? 0 : fk_clone(l->own, target);
        if (rc == 0) {
            fk_rmtree(l->own); /* gone after a move; the source of a copy */
            free(l->own);
            l->own = NULL;
        }
        return rc;
    }
    return fk_clone(l->path, target);
}

uint64_t fk_cache_refetches(fk_cache *c) {
    pthread_mutex_lock(&c->lock);
    uint64_t n = c->refetches;
    pthread_mutex_unlock(&c->lock);
    return n;
}

static void next_tmp(fk_cache *c, char *out, size_t len, char kind) {
    pthread_mutex_lock(&c->lock);
    uint64_t n = ++c->seq;
    pthread_mutex_unlock(&c->lock);
    snprintf(out, len, "%s/%c%llu", c->tmp, kind, (unsigned long long)n);
}

/* A copy that has just arrived in the tmp directory, with what is known of it. */
typedef struct {
    const char *file;
    int64_t size;
    int64_t packed_size;
    const char *sha256;
    int64_t stamp_size, stamp_mtime;
    int source;
    int64_t moved;
    int refetched;
} arrival;

/* Whether size bytes fit once every unpinned object is evicted (lock held). */
static int room_for(fk_cache *c, int64_t size) {
    if (c->used + size <= c->capacity) {
        return 1;
    }
    int64_t pinned = 0;
    for (fk_entry *e = c->recency.newer; e != &c->recency; e = e->newer) {
        pinned += e->pins > 0 ? e->size : 0;
    }
    return pinned + size <= c->capacity;
}

/* Makes room and moves the arrival in under its hashed name; returns it pinned in out. When it
 * cannot be cached (larger than the cache, or no room because the rest is in use) it is read
 * through: out owns the file, which the task gets and the cache does not keep. 0 or -1. */
static int insert(fk_cache *c, const char *key, const char *id, int packed, const arrival *a, fk_lease *out,
                  char *err, size_t errlen) {
    char hex[65];
    fk_sha256_hex(key, strlen(key), hex);
    char target[PATH_MAX];
    snprintf(target, sizeof target, "%s/%s", c->dir, hex);
    fk_entry *victims = NULL; /* retired and unpinned: deleted below */
    pthread_mutex_lock(&c->lock);
    fk_entry *present = find(c, key);
    if (present) { /* an output registered meanwhile, or a copy fetched while this one travelled */
        int gone = retire(c, present);
        if (gone) {
            present->chain = victims;
            victims = present;
        }
    }
    int cached = a->size <= c->capacity && room_for(c, a->size);
    if (cached) {
        while (c->used + a->size > c->capacity) {
            fk_entry *v = c->recency.newer;
            while (v != &c->recency && v->pins > 0) {
                v = v->newer;
            }
            retire(c, v); /* room_for said it exists, and it is unpinned */
            c->evictions++;
            v->chain = victims;
            victims = v;
        }
        if (rename(a->file, target) != 0) {
            int e = errno;
            pthread_mutex_unlock(&c->lock);
            fk_rmtree(a->file);
            while (victims) {
                fk_entry *next = victims->chain;
                forget(c, victims, 1);
                victims = next;
            }
            fmt(err, errlen, "cannot store %s in the cache: %s", id, strerror(e));
            return -1;
        }
        struct stat st;
        if (lstat(target, &st) == 0 && S_ISREG(st.st_mode)) {
            chmod(target, 0444); /* tasks get copies; nothing writes the cache's own */
        }
        fk_entry *e = calloc(1, sizeof *e);
        if (!e) {
            abort();
        }
        e->key = xstrdup(key);
        e->id = xstrdup(id);
        e->packed = packed;
        e->path = xstrdup(target);
        e->size = a->size;
        e->packed_size = a->packed_size;
        snprintf(e->sha256, sizeof e->sha256, "%s", a->sha256 ? a->sha256 : "");
        e->stamp_size = a->stamp_size;
        e->stamp_mtime = a->stamp_mtime;
        add(c, e);
        c->used += a->size;
        pin(e, out, a->source, a->moved);
    }
    pthread_mutex_unlock(&c->lock);
    while (victims) {
        fk_entry *next = victims->chain;
        forget(c, victims, 1);
        victims = next;
    }
    if (!cached) {
        memset(out, 0, sizeof *out);
        out->own = xstrdup(a->file);
        out->path = out->own;
        out->size = a->size;
        out->source = a->source;
        out->moved = a->moved;
        snprintf(out->sha256, sizeof out->sha256, "%s", packed && a->sha256 ? a->sha256 : "");
        fk_debug("%s (%lld bytes) read through: %s", id, (long long)a->size,
                 a->size > c->capacity ? "larger than the cache" : "the rest of the cache is in use");
    } else if (packed && c->listener) {
        c->listener(c->ctx, id, a->size);
    }
    out->refetched = a->refetched;
    return 0;
}

/* ---- verified copies ---- */

typedef struct {
    int fd;
    fk_hash sha;
    fk_hash declared; /* MD5, when the task declared one */
    int md5;
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
    fk_hash_update(&s->sha, data, len);
    if (s->md5) {
        fk_hash_update(&s->declared, data, len);
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

/* The file a store source names, in path; -1 with err (every such failure is permanent). A
 * relative source must stay inside the store root, links followed: a link in the store pointing
 * outside it is refused. */
static int store_path(const char *root, const char *src, char *path, size_t len, char *err, size_t errlen) {
    if (strncmp(src, "file:", 5) == 0) {
        const char *p = src + 5;
        if (strncmp(p, "//", 2) == 0) {
            p += 2;
            const char *slash = strchr(p, '/'); /* skip an authority (file://host/path) */
            p = slash ? slash : "";
        }
        snprintf(path, len, "%s", p);
        if (path[0] != '/' || percent_decode(path) != 0) {
            fmt(err, errlen, "'%s' is not an absolute file: URL (file:/path/to/object; a path relative to the "
                "store root is written without file:)", src);
            return -1;
        }
        return 0;
    }
    if (src[0] == '/') {
        snprintf(path, len, "%s", src);
        return 0;
    }
    if (!root) {
        fmt(err, errlen, "'%s' is a relative source but the executor has no shared store root (--store DIR)", src);
        return -1;
    }
    if (under_root(root, src, path, len) != 0) {
        fmt(err, errlen, "'%s' leaves the shared store root", src);
        return -1;
    }
    char real[PATH_MAX], realroot[PATH_MAX];
    if (realpath(path, real) && realpath(root, realroot)) {
        size_t n = strlen(realroot);
        if (strncmp(real, realroot, n) != 0 || (real[n] != '/' && real[n] != 0)) {
            fmt(err, errlen, "'%s' is a link to %s, outside the shared store root", src, real);
            return -1;
        }
    }
    return 0;
}

/* The store file's size and mtime now (-1, -1 when it is not a file, or is gone). */
static void stamp_of(const char *root, const fk_input *ref, int64_t *size, int64_t *mtime) {
    *size = *mtime = -1;
    char path[PATH_MAX], why[256];
    if (strncmp(ref->source.s, "http://", 7) == 0 || strncmp(ref->source.s, "https://", 8) == 0
        || store_path(root, ref->source.s, path, sizeof path, why, sizeof why) != 0) {
        return;
    }
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
        *size = st.st_size;
        *mtime = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    }
}

/* Opens a store source that is a file, stamping it; -1 with err (permanent). */
static int open_store_file(const char *root, const char *src, int64_t *ssize, int64_t *smtime, char *err,
                           size_t errlen) {
    char path[PATH_MAX];
    if (store_path(root, src, path, sizeof path, err, errlen) != 0) {
        return -1;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0) {
            close(fd);
        }
        fmt(err, errlen, "%s does not exist in the shared store", path);
        return -1;
    }
    *ssize = st.st_size;
    *smtime = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    return fd;
}

/* What copy_verified learnt of a copy. */
typedef struct {
    int64_t size;
    char sha256[65];
    int64_t stamp_size, stamp_mtime;
} copied;

static int copy_hashed(copy_sink *sink, const char *root, const char *peer, const char *token, const fk_input *ref,
                       const char *out, copied *got, int *permanent, char *err, size_t errlen);

/* Copies from a peer (peer != NULL) or the shared store into out, hashing it (SHA-256) and
 * verifying it against the task's declared size and checksum and, from a peer, the peer's own
 * record. 0, or -1 with err; *permanent says the store itself does not have it as declared. */
static int copy_verified(const char *root, const char *peer, const char *token, const fk_input *ref,
                         const char *out, copied *got, int *permanent, char *err, size_t errlen) {
    copy_sink s;
    memset(&s, 0, sizeof s);
    int rc = copy_hashed(&s, root, peer, token, ref, out, got, permanent, err, errlen);
    fk_hash_free(&s.sha); /* the hashes a failed copy left unfinished */
    fk_hash_free(&s.declared);
    return rc;
}

static int copy_hashed(copy_sink *s, const char *root, const char *peer, const char *token, const fk_input *ref,
                       const char *out, copied *got, int *permanent, char *err, size_t errlen) {
    memset(got, 0, sizeof *got);
    got->stamp_size = got->stamp_mtime = -1;
    *permanent = 0;
    s->err = err;
    s->errlen = errlen;
    const char *sum = ref->checksum.s;
    fk_hash_init(&s->sha, 0);
    if (ref->checksum.len) {
        s->md5 = strncmp(sum, "md5:", 4) == 0;
        if (!s->md5 && strncmp(sum, "sha256:", 7) != 0) {
            fmt(err, errlen, "checksum of %s must be sha256:HEX or md5:HEX, got %s", ref->id.s, sum);
            *permanent = 1;
            return -1;
        }
        if (s->md5) {
            fk_hash_init(&s->declared, 1);
        }
    }
    char from[600];
    if (peer) {
        snprintf(from, sizeof from, "peer %s", peer);
    } else {
        snprintf(from, sizeof from, "the shared store (%s)", ref->source.s);
    }
    s->fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (s->fd < 0) {
        fmt(err, errlen, "cannot create %s: %s", out, strerror(errno));
        return -1;
    }
    char recorded[65] = "";
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
        rc = fk_http_get(url, peer ? token : NULL, peer ? recorded : NULL, to_file, s, err, errlen);
        free(url);
        if (rc == 404 && !peer) {
            *permanent = 1; /* the store has no such object */
        }
        rc = rc == 0 ? 0 : -1;
        if (rc == 0 && peer && !recorded[0]) {
            fmt(err, errlen, "peer %s did not say what it recorded of %s (no " FK_SHA256_HEADER " header)", peer,
                ref->id.s);
            rc = -1;
        }
    } else {
        int in = open_store_file(root, ref->source.s, &got->stamp_size, &got->stamp_mtime, err, errlen);
        rc = in < 0 ? -1 : 0;
        *permanent = in < 0;
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
                rc = to_file(s, buf, (size_t)n);
            }
        }
        if (in >= 0) {
            close(in);
        }
    }
    if (close(s->fd) != 0 && rc == 0) {
        fmt(err, errlen, "cannot write the copy: %s", strerror(errno));
        rc = -1;
    }
    if (rc != 0) {
        return -1;
    }
    fk_hash_hex(&s->sha, got->sha256);
    got->size = s->n;
    if (ref->size >= 0 && s->n != ref->size) {
        fmt(err, errlen, "got %lld bytes from %s, the task declared %lld", (long long)s->n, from, (long long)ref->size);
        *permanent = !peer;
        return -1;
    }
    if (ref->checksum.len) {
        char declared[65];
        if (s->md5) {
            fk_hash_hex(&s->declared, declared);
        } else {
            snprintf(declared, sizeof declared, "%s", got->sha256);
        }
        const char *want = strchr(sum, ':') + 1;
        if (strcasecmp(declared, want) != 0) {
            fmt(err, errlen, "checksum mismatch from %s: %.*s %s, the task declared %s", from, (int)(want - 1 - sum),
                sum, declared, want);
            *permanent = !peer;
            return -1;
        }
    }
    if (peer && strcasecmp(recorded, got->sha256) != 0) {
        fmt(err, errlen, "peer %s sent bytes that do not match its own record of %s (sha256 %s, recorded %s)", peer,
            ref->id.s, got->sha256, recorded);
        return -1;
    }
    return 0;
}

/* A store copy with nothing to check but the size: no checksum declared, no record kept (the copy
 * is the task's, not the cache's). The kernel copies it, with no pass over the bytes in user space
 * (hashing every byte cost more CPU than a short task itself: docs/benchmarks.md, "Workflows"). */
static int64_t plain_store_copy(const char *root, const fk_input *ref, const char *out, int *permanent, char *err,
                                size_t errlen) {
    int64_t size, mtime;
    int in = open_store_file(root, ref->source.s, &size, &mtime, err, errlen);
    if (in < 0) {
        *permanent = 1;
        return -1;
    }
    *permanent = 0;
    if (ref->size >= 0 && size != ref->size) {
        close(in);
        fmt(err, errlen, "%s holds %lld bytes in the shared store, the task declared %lld", ref->source.s,
            (long long)size, (long long)ref->size);
        *permanent = 1;
        return -1;
    }
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = fd < 0 ? -1 : fk_copy_fd(in, fd, (off_t)size);
    int saved = errno;
    close(in);
    if (fd >= 0 && close(fd) != 0 && rc == 0) {
        rc = -1;
        saved = errno;
    }
    if (rc != 0) {
        fmt(err, errlen, "cannot copy %s from the shared store to %s: %s", ref->source.s, out, strerror(saved));
        return -1;
    }
    return size;
}

int64_t fk_store_copy(const char *store_root, const fk_input *ref, const char *out, int *permanent, char *err,
                      size_t errlen) {
    const char *src = ref->source.s;
    if (!ref->checksum.len && strncmp(src, "http://", 7) != 0 && strncmp(src, "https://", 8) != 0) {
        int64_t n = plain_store_copy(store_root, ref, out, permanent, err, errlen);
        if (n < 0) {
            unlink(out);
        }
        return n;
    }
    copied got;
    if (copy_verified(store_root, NULL, NULL, ref, out, &got, permanent, err, errlen) != 0) {
        unlink(out);
        return -1;
    }
    return got.size;
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
        /* GNU tar refuses members that would land outside the directory; links are refused below */
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
    char link[PATH_MAX];
    int64_t n = fk_tree_size_plain(target, link, sizeof link);
    if (n == -2) {
        /* a link could lead a task, or the cache, to a file outside the object */
        fmt(err, errlen, "the archive holds a link ('%s'): archives unpacked for tasks may hold only files and "
            "directories", link);
    } else if (n < 0) {
        fmt(err, errlen, "cannot measure %s: %s", target, strerror(errno));
    }
    if (n < 0) {
        fk_rmtree(target);
        return -1;
    }
    return n;
}

/* ---- leases ---- */

static const char *form_name(int unpack) {
    static const char *names[] = {"none", "gzip", "tar", "tar_gz"};
    return names[unpack & 3];
}

static int fetch_packed(fk_cache *c, const fk_input *ref, const fk_str *peers, size_t npeers, int refetched,
                        fk_lease *out, int *permanent, char *err, size_t errlen) {
    char tried[2048] = "";
    size_t k = 0;
    char why[800];
    char path[PATH_MAX];
    copied got;
    for (size_t i = 0; i < npeers; i++) {
        next_tmp(c, path, sizeof path, 'p');
        int ignored;
        if (copy_verified(c->store_root, peers[i].s, c->token, ref, path, &got, &ignored, why, sizeof why) == 0) {
            arrival a = {path, got.size, got.size, got.sha256, -1, -1, FK_SRC_PEER, got.size, refetched};
            return insert(c, ref->id.s, ref->id.s, 1, &a, out, err, errlen);
        }
        /* a stale hint, a peer gone, a bad copy: fall through to the next source */
        unlink(path);
        if (strstr(why, "its own record")) {
            fk_warn("refused a copy of %s: %s", ref->id.s, why); /* changed where it was cached */
        }
        k += (size_t)snprintf(tried + k, k < sizeof tried ? sizeof tried - k : 0, "peer %s: %s; ", peers[i].s, why);
        k = k < sizeof tried ? k : sizeof tried - 1;
    }
    next_tmp(c, path, sizeof path, 's');
    if (copy_verified(c->store_root, NULL, NULL, ref, path, &got, permanent, why, sizeof why) != 0) {
        unlink(path);
        fmt(err, errlen, "cannot fetch %s (%sthe shared store (%s): %s)", ref->id.s, tried, ref->source.s, why);
        return -1;
    }
    arrival a = {path, got.size, got.size, got.sha256, got.stamp_size, got.stamp_mtime, FK_SRC_STORE, got.size,
                 refetched};
    return insert(c, ref->id.s, ref->id.s, 1, &a, out, err, errlen);
}

static int fetch(fk_cache *c, const char *key, const fk_input *ref, const fk_str *peers, size_t npeers, int refetched,
                 fk_lease *out, int *permanent, char *err, size_t errlen) {
    if (ref->unpack == 0) {
        return fetch_packed(c, ref, peers, npeers, refetched, out, permanent, err, errlen);
    }
    fk_input packed = *ref;
    packed.unpack = 0;
    fk_lease pl;
    if (fk_cache_lease(c, &packed, peers, npeers, &pl, permanent, err, errlen) != 0) {
        return -1;
    }
    char path[PATH_MAX];
    next_tmp(c, path, sizeof path, 'u');
    char why[800];
    int64_t size = fk_unpack(pl.path, ref->unpack, path, why, sizeof why);
    int rc;
    if (size < 0) {
        fmt(err, errlen, "cannot unpack %s as %s: %s", ref->id.s, form_name(ref->unpack), why);
        *permanent = 1; /* the archive is what the store holds */
        rc = -1;
    } else {
        int64_t ss = -1, sm = -1;
        if (pl.entry) {
            ss = pl.entry->stamp_size;
            sm = pl.entry->stamp_mtime;
        }
        arrival a = {path, size, pl.size, pl.sha256, ss, sm, pl.source, pl.moved, refetched || pl.refetched};
        rc = insert(c, key, ref->id.s, 0, &a, out, err, errlen);
    }
    fk_cache_release(c, &pl);
    return rc;
}

/* Why a cached copy may not serve ref (in why), or 0 if it may: it must match the size and checksum
 * the task declares and, with FK_REVALIDATE_STAT, the store file as it is now. */
static int stale(fk_cache *c, fk_entry *e, const fk_input *ref, char *why, size_t len) {
    if (ref->size >= 0 && ref->size != e->packed_size) {
        fmt(why, len, "the cached copy has %lld bytes, the task declares %lld", (long long)e->packed_size,
            (long long)ref->size);
        return 1;
    }
    if (ref->checksum.len) {
        const char *sum = ref->checksum.s;
        const char *want = strchr(sum, ':') ? strchr(sum, ':') + 1 : "";
        int md5 = strncmp(sum, "md5:", 4) == 0;
        const char *have = md5 ? e->md5 : e->sha256;
        if (md5 && !have[0] && e->packed) {
            /* computed once, the first time a task declares an MD5 */
            int fd = open(e->path, O_RDONLY | O_CLOEXEC);
            if (fd >= 0) {
                fk_hash h;
                fk_hash_init(&h, 1);
                char buf[65536];
                ssize_t n;
                while ((n = read(fd, buf, sizeof buf)) > 0) {
                    fk_hash_update(&h, buf, (size_t)n);
                }
                close(fd);
                if (n == 0) {
                    char hex[65];
                    fk_hash_hex(&h, hex);
                    pthread_mutex_lock(&c->lock);
                    snprintf(e->md5, sizeof e->md5, "%s", hex);
                    pthread_mutex_unlock(&c->lock);
                } else {
                    fk_hash_free(&h);
                }
            }
        }
        if (!have[0] || strcasecmp(have, want) != 0) {
            fmt(why, len, "the cached copy does not match the declared %s", md5 ? "md5" : "sha256");
            return 1;
        }
    }
    if (c->revalidate == FK_REVALIDATE_STAT && e->stamp_size >= 0) {
        int64_t size, mtime;
        stamp_of(c->store_root, ref, &size, &mtime);
        if (size >= 0 && (size != e->stamp_size || mtime != e->stamp_mtime)) {
            fmt(why, len, "the store file changed (%lld bytes when copied, now %lld)", (long long)e->stamp_size,
                (long long)size);
            return 1;
        }
    }
    return 0;
}

int fk_cache_lease(fk_cache *c, const fk_input *ref, const fk_str *peers, size_t npeers, fk_lease *out,
                   int *permanent, char *err, size_t errlen) {
    char key[PATH_MAX];
    if (ref->unpack == 0) {
        snprintf(key, sizeof key, "%s", ref->id.s);
    } else {
        snprintf(key, sizeof key, "%s#%s", ref->id.s, form_name(ref->unpack));
    }
    memset(out, 0, sizeof *out);
    *permanent = 0;
    int refetched = 0;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        fk_entry *e = find(c, key);
        if (e) {
            unlink_recency(e);
            push_newest(c, e);
            pin(e, out, FK_SRC_LOCAL, 0);
            pthread_mutex_unlock(&c->lock);
            char why[512];
            if (!stale(c, e, ref, why, sizeof why)) {
                out->refetched = refetched;
                return 0;
            }
            pthread_mutex_lock(&c->lock);
            int mine = find(c, key) == e;
            if (mine) {
                retire(c, e);
                c->refetches++;
            }
            int last = --e->pins == 0 && e->retired;
            pthread_mutex_unlock(&c->lock);
            if (mine) {
                fk_info("cached copy of %s is stale, fetching it again: %s", e->id, why);
                if (e->packed && c->listener) {
                    c->listener(c->ctx, e->id, -1);
                }
            }
            if (last) {
                forget(c, e, 0);
            }
            memset(out, 0, sizeof *out);
            refetched = 1;
            pthread_mutex_lock(&c->lock);
            continue;
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
            *permanent = f->permanent;
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

    int rc = fetch(c, key, ref, peers, npeers, refetched, out, permanent, err, errlen);

    pthread_mutex_lock(&c->lock);
    flight **p = &c->flights;
    while (*p != mine) {
        p = &(*p)->next;
    }
    *p = mine->next;
    mine->done = 1;
    mine->failed = rc != 0;
    mine->permanent = *permanent;
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
    int fd = open(staged, O_RDONLY | O_CLOEXEC);
    fk_hash h;
    fk_hash_init(&h, 0);
    char buf[65536];
    ssize_t n = fd < 0 ? -1 : 0;
    while (fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0) {
        fk_hash_update(&h, buf, (size_t)n);
    }
    if (fd >= 0) {
        close(fd);
    }
    if (n != 0) {
        fk_hash_free(&h);
        unlink(staged);
        fmt(err, errlen, "cannot read output %s: %s", file, strerror(errno));
        return -1;
    }
    char sha[65];
    fk_hash_hex(&h, sha);
    arrival a = {staged, st.st_size, st.st_size, sha, -1, -1, FK_SRC_LOCAL, 0, 0};
    fk_lease l;
    if (insert(c, id, id, 1, &a, &l, err, errlen) != 0) {
        return -1;
    }
    fk_cache_release(c, &l); /* not cached (no room): it was saved already, the copy just goes */
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
