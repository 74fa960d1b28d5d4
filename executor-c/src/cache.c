#include "cache.h"

#include "fetch.h"
#include "fsutil.h"
#include "hash.h"
#include "log.h"
#include "unpack.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

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
    int64_t stamp_size;         /* the store file when fk_copied: size and mtime (ns); -1: none */
    int64_t stamp_mtime;
    int pins;
    int retired;                /* out of the cache, still pinned: freed by the last release */
    int held;                   /* a temporary output held for its readers: one of the pins is that */
};

#define FLIGHT_BUCKETS 1024

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
    flight *flights[FLIGHT_BUCKETS]; /* fetches in progress, by key: a gather starts a thousand at once */
    int replicating;            /* fk_cache_replicate threads still running: close waits for them */
};

static void free_entry(fk_entry *e);
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

static flight *flight_find(fk_cache *c, const char *key) {
    flight *f = c->flights[hash_of(key) % FLIGHT_BUCKETS];
    while (f && strcmp(f->key, key) != 0) {
        f = f->next;
    }
    return f;
}

/* A new flight for key, under the lock: the caller fetches it and ends it with flight_end. */
static flight *flight_start(fk_cache *c, const char *key) {
    flight *f = calloc(1, sizeof *f);
    if (!f) {
        abort();
    }
    f->key = xstrdup(key);
    flight **head = &c->flights[hash_of(key) % FLIGHT_BUCKETS];
    f->next = *head;
    *head = f;
    return f;
}

/* Takes f out of the flights (under the lock); whoever waits on it still holds it. */
static void flight_end(fk_cache *c, flight *f) {
    flight **p = &c->flights[hash_of(f->key) % FLIGHT_BUCKETS];
    while (*p != f) {
        p = &(*p)->next;
    }
    *p = f->next;
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
        fk_errf(err, errlen, "cache capacity must be positive");
        return NULL;
    }
    if (strlen(dir) > PATH_MAX / 4) {
        fk_errf(err, errlen, "the cache directory path is too long (over %d bytes)", PATH_MAX / 4);
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
        fk_errf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
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
    pthread_mutex_lock(&c->lock);
    while (c->replicating > 0) { /* each ends with its fetch, which has its own timeouts */
        pthread_cond_wait(&c->landed, &c->lock);
    }
    pthread_mutex_unlock(&c->lock);
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
        if (present->held) { /* the new copy is held in its place, or not at all */
            present->held = 0;
            present->pins--;
        }
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
            fk_errf(err, errlen, "cannot store %s in the cache: %s", id, strerror(e));
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
    fk_copied got;
    for (size_t i = 0; i < npeers; i++) {
        next_tmp(c, path, sizeof path, 'p');
        int ignored;
        if (fk_copy_verified(c->store_root, peers[i].s, c->token, ref, path, &got, &ignored, why, sizeof why) == 0) {
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
    if (fk_copy_verified(c->store_root, NULL, NULL, ref, path, &got, permanent, why, sizeof why) != 0) {
        unlink(path);
        fk_errf(err, errlen, "cannot fetch %s (%sthe shared store (%s): %s)", ref->id.s, tried, ref->source.s, why);
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
        fk_errf(err, errlen, "cannot unpack %s as %s: %s", ref->id.s, form_name(ref->unpack), why);
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
        fk_errf(why, len, "the cached copy has %lld bytes, the task declares %lld", (long long)e->packed_size,
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
            fk_errf(why, len, "the cached copy does not match the declared %s", md5 ? "md5" : "sha256");
            return 1;
        }
    }
    if (c->revalidate == FK_REVALIDATE_STAT && e->stamp_size >= 0) {
        int64_t size, mtime;
        fk_store_stamp(c->store_root, ref, &size, &mtime);
        if (size >= 0 && (size != e->stamp_size || mtime != e->stamp_mtime)) {
            fk_errf(why, len, "the store file changed (%lld bytes when fk_copied, now %lld)", (long long)e->stamp_size,
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
        flight *f = flight_find(c, key);
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
    flight *mine = flight_start(c, key);
    pthread_mutex_unlock(&c->lock);

    int rc = fetch(c, key, ref, peers, npeers, refetched, out, permanent, err, errlen);

    pthread_mutex_lock(&c->lock);
    flight_end(c, mine);
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

typedef struct {
    fk_cache *c;
    const fk_input **refs; /* those claimed */
    size_t *orig;          /* a claimed one's place in the caller's refs */
    fk_lease *out;
} gather_ctx;

static void gathered(void *ctx, size_t index, const char *file, const fk_copied *got) {
    gather_ctx *g = ctx;
    const fk_input *ref = g->refs[index];
    arrival a = {file, got->size, got->size, got->sha256, -1, -1, FK_SRC_PEER, got->size, 0};
    char err[512];
    fk_lease *l = &g->out[g->orig[index]];
    if (insert(g->c, ref->id.s, ref->id.s, 1, &a, l, err, sizeof err) != 0) {
        memset(l, 0, sizeof *l);
        fk_warn("%s", err);
    }
}

size_t fk_cache_gather(fk_cache *c, const char *peer, const fk_input *const *refs, size_t n, fk_lease *out) {
    memset(out, 0, n * sizeof *out);
    const fk_input **mine = calloc(n ? n : 1, sizeof *mine);
    size_t *orig = calloc(n ? n : 1, sizeof *orig);
    flight **claims = calloc(n ? n : 1, sizeof *claims);
    if (!mine || !orig || !claims) {
        abort();
    }
    size_t m = 0;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < n; i++) {
        const char *key = refs[i]->id.s;
        if (refs[i]->unpack != 0 || find(c, key) || flight_find(c, key)) {
            continue; /* held, being fetched (perhaps twice in refs), or not a stored form */
        }
        claims[m] = flight_start(c, key);
        mine[m] = refs[i];
        orig[m++] = i;
    }
    pthread_mutex_unlock(&c->lock);
    size_t arrived = 0;
    if (m) {
        char prefix[PATH_MAX];
        next_tmp(c, prefix, sizeof prefix - 2, 'g');
        strcat(prefix, "-");
        gather_ctx g = {c, mine, orig, out};
        char err[512];
        if (fk_batch_fetch(peer, c->token, (const fk_input *const *)mine, m, prefix, gathered, &g, err, sizeof err) < 0) {
            fk_debug("batch of %zu objects from peer %s: %s", m, peer, err); /* each task fetches its own */
        }
        for (size_t k = 0; k < m; k++) {
            arrived += out[orig[k]].path != NULL;
        }
        fk_debug("gathered %zu of %zu objects from peer %s in one request", arrived, m, peer);
    }
    pthread_mutex_lock(&c->lock);
    for (size_t k = 0; k < m; k++) {
        flight *f = claims[k];
        flight_end(c, f);
        f->done = 1; /* not failed: whoever waited looks again, and finds it or fetches it */
        if (f->waiters == 0) {
            free(f->key);
            free(f);
        }
    }
    pthread_cond_broadcast(&c->landed);
    pthread_mutex_unlock(&c->lock);
    free(mine);
    free(orig);
    free(claims);
    return arrived;
}

/* Moves an output into the cache's tmp directory and hashes it: the arrival for insert. 0 or -1. */
static int adopt(fk_cache *c, const char *id, fk_outfile *f, char *staged, size_t stagedlen, char sha[65],
                 int64_t *size, char *err, size_t errlen) {
    next_tmp(c, staged, stagedlen, 'o');
    if (fk_outfile_take(f, staged, 0) != 0) {
        fk_errf(err, errlen, "cannot register output %s: %s", id, strerror(errno));
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
        fk_outfile_put_back(f, staged);
        fk_errf(err, errlen, "cannot read output %s: %s", id, strerror(errno));
        return -1;
    }
    fk_hash_hex(&h, sha);
    *size = f->st.st_size;
    return 0;
}

/* A task's output taken in (moved or copied) and inserted as the object id: leased in l (pinned, or read through). */
static int adopt_output(fk_cache *c, const char *id, fk_outfile *f, fk_lease *l, char *err, size_t errlen) {
    char staged[PATH_MAX], sha[65];
    int64_t size;
    if (adopt(c, id, f, staged, sizeof staged, sha, &size, err, errlen) != 0) {
        return -1;
    }
    arrival a = {staged, size, size, sha, -1, -1, FK_SRC_LOCAL, 0, 0};
    return insert(c, id, id, 1, &a, l, err, errlen);
}

int fk_cache_register(fk_cache *c, const char *id, fk_outfile *f, char *err, size_t errlen) {
    fk_lease l;
    if (adopt_output(c, id, f, &l, err, errlen) != 0) {
        return -1;
    }
    fk_cache_release(c, &l); /* not cached (no room): it was saved already, the copy just goes */
    return 0;
}

int fk_cache_hold(fk_cache *c, const char *id, fk_outfile *f, char *err, size_t errlen) {
    fk_lease l;
    if (adopt_output(c, id, f, &l, err, errlen) != 0) {
        return -1;
    }
    if (!l.entry) { /* no room: back where the task left it (or, a copy, dropped), for the store */
        int rc = fk_outfile_put_back(f, l.own);
        if (rc != 0) {
            fk_errf(err, errlen, "cannot put output %s back: %s", id, strerror(errno));
        } else {
            free(l.own);
            l.own = NULL; /* gone from there: nothing for release to delete */
        }
        fk_cache_release(c, &l);
        return rc == 0 ? 0 : -1;
    }
    /* the lease's pin stays: the entry is held. A copy held before under this id (the producer ran
     * again here) was retired by insert, still pinned: its hold goes now */
    pthread_mutex_lock(&c->lock);
    l.entry->held = 1;
    pthread_mutex_unlock(&c->lock);
    return 1;
}

/* Drops the hold on e (lock held); returns 1 when e is retired and nothing pins it any more. */
static int unhold(fk_entry *e) {
    e->held = 0;
    return --e->pins == 0 && e->retired;
}

void fk_cache_unhold(fk_cache *c, const fk_str *ids, size_t n) {
    for (size_t i = 0; i < n; i++) {
        pthread_mutex_lock(&c->lock);
        fk_entry *e = find(c, ids[i].s);
        int last = e && e->held ? unhold(e) : 0;
        pthread_mutex_unlock(&c->lock);
        (void)last; /* find only sees entries in the cache: none of them is retired */
    }
}

void fk_cache_unhold_all(fk_cache *c) {
    pthread_mutex_lock(&c->lock);
    for (fk_entry *e = c->recency.newer; e != &c->recency; e = e->newer) {
        if (e->held) {
            unhold(e);
        }
    }
    pthread_mutex_unlock(&c->lock);
}

size_t fk_cache_held(fk_cache *c) {
    size_t n = 0;
    pthread_mutex_lock(&c->lock);
    for (fk_entry *e = c->recency.newer; e != &c->recency; e = e->newer) {
        n += e->held ? 1 : 0;
    }
    pthread_mutex_unlock(&c->lock);
    return n;
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

/* ---- multicast: fetching ahead of demand ---- */

typedef struct {
    fk_cache *c;
    fk_input ref;
    fk_str *peers;
    size_t npeers;
} replica_job;

static void replica_job_free(replica_job *j) {
    fk_str_free(&j->ref.id);
    fk_str_free(&j->ref.source);
    fk_str_free(&j->ref.checksum);
    fk_str_free(&j->ref.name);
    for (size_t i = 0; i < j->npeers; i++) {
        fk_str_free(&j->peers[i]);
    }
    free(j->peers);
    free(j);
}

static void *replicate_main(void *arg) {
    replica_job *j = arg;
    fk_cache *c = j->c;
    fk_lease l;
    int permanent = 0;
    char err[1024];
    if (fk_cache_lease(c, &j->ref, j->peers, j->npeers, &l, &permanent, err, sizeof err) == 0) {
        fk_debug("replicated %s (%lld bytes moved)", j->ref.id.s, (long long)l.moved);
        fk_cache_release(c, &l); /* kept in the cache, unpinned, reported to the listener on arrival */
    } else {
        fk_warn("cannot replicate %s: %s", j->ref.id.s, err);
    }
    replica_job_free(j);
    pthread_mutex_lock(&c->lock);
    c->replicating--;
    pthread_cond_broadcast(&c->landed);
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

void fk_cache_replicate(fk_cache *c, const fk_replica *r) {
    replica_job *j = calloc(1, sizeof *j);
    if (!j) {
        abort();
    }
    j->c = c;
    j->ref.id = fk_str_dup(r->ref.id.s, r->ref.id.len);
    j->ref.source = fk_str_dup(r->ref.source.s, r->ref.source.len);
    j->ref.size = r->ref.size;
    j->ref.checksum = fk_str_dup(r->ref.checksum.s, r->ref.checksum.len);
    j->ref.name = fk_str_of("");
    j->ref.unpack = 0;
    j->peers = calloc(r->npeers ? r->npeers : 1, sizeof *j->peers);
    if (!j->peers) {
        abort();
    }
    for (size_t i = 0; i < r->npeers; i++) {
        j->peers[i] = fk_str_dup(r->peers[i].s, r->peers[i].len);
    }
    j->npeers = r->npeers;
    pthread_mutex_lock(&c->lock);
    c->replicating++;
    pthread_mutex_unlock(&c->lock);
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, replicate_main, j) != 0) {
        fk_warn("cannot replicate %s: no thread", j->ref.id.s);
        replica_job_free(j);
        pthread_mutex_lock(&c->lock);
        c->replicating--;
        pthread_mutex_unlock(&c->lock);
    }
    pthread_attr_destroy(&attr);
}
