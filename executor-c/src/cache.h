/* The executor's local data cache (data diffusion), with the Java CacheStore's semantics
 * (docs/data-diffusion.md): up to a byte capacity of objects stored under the SHA-256 of their key;
 * a lease is a local hit, checked fresh (against the task's declared size and checksum, and with
 * FK_REVALIDATE_STAT against the store file), or a fetch made once however many slots ask at the
 * same time (single flight) from the peers in the hints, then the shared store; every arrival is
 * hashed (SHA-256) and verified against what the task declares and, from a peer, what the peer
 * recorded; tasks get their own copies (fk_lease_copy); an object that cannot be cached (too large,
 * or no room) is read through; room made by evicting unpinned objects in least-recently-used order;
 * every add and removal of a stored-form object reported to the listener. */
#ifndef FK_CACHE_H
#define FK_CACHE_H

#include "outfile.h"
#include "proto.h"

#include <stdint.h>

enum fk_source { FK_SRC_LOCAL = 0, FK_SRC_PEER = 1, FK_SRC_STORE = 2 };

typedef struct fk_cache fk_cache;
typedef struct fk_entry fk_entry;

/* Told (on the thread that made the change) about objects added (size >= 0) or removed (-1). */
typedef void (*fk_cache_listener)(void *ctx, const char *id, int64_t size);

/* When a cached copy is checked against its store file before use (docs/data-diffusion.md). */
enum fk_revalidate { FK_REVALIDATE_NEVER = 0, FK_REVALIDATE_STAT = 1 };

typedef struct {
    fk_entry *entry;  /* NULL for a read-through copy */
    char *own;        /* a read-through copy (not cached): the task's to take, deleted on release */
    const char *path; /* the object's file or directory, valid while leased; never handed to a task */
    int64_t size;
    int source;       /* enum fk_source */
    int64_t moved;    /* bytes that travelled to get it */
    char sha256[65];  /* the stored form's SHA-256 recorded on arrival ("" for an unpacked form) */
    int cached;       /* 0: read through */
    int refetched;    /* the cached copy was stale and was fetched again */
} fk_lease;

/* dir is emptied first; store_root resolves relative sources (may be NULL); token is what peers'
 * cache servers require ("" for none); revalidate is an enum fk_revalidate. NULL on error. */
fk_cache *fk_cache_open(const char *dir, int64_t capacity, const char *store_root, const char *token, int revalidate,
                        fk_cache_listener listener, void *ctx, char *err, size_t errlen);
void fk_cache_close(fk_cache *c);
int64_t fk_cache_capacity(const fk_cache *c);

/* The object in ref, pinned (fetching it if needed); peers are host:port of peers that may hold it.
 * Returns 0, or -1 with err saying why no source could provide it; *permanent is then set when
 * no executor could do better (not in the store, outside it, not as declared there). */
int fk_cache_lease(fk_cache *c, const fk_input *ref, const fk_str *peers, size_t npeers, fk_lease *out,
                   int *permanent, char *err, size_t errlen);
void fk_cache_release(fk_cache *c, fk_lease *l);
/* Gives a task its own copy of a leased object at target (a read-through one is moved there).
 * 0 or -1 (errno set). */
int fk_lease_copy(fk_lease *l, const char *target);
/* Cached copies found stale and fetched again so far. */
uint64_t fk_cache_refetches(fk_cache *c);

/* Adopts a task's output f as the object id (moved in when the sandbox rule lets it be, else copied:
 * outfile.h); an output that cannot be cached is dropped (it was saved to the output store first). */
int fk_cache_register(fk_cache *c, const char *id, fk_outfile *f, char *err, size_t errlen);

/* Adopts a task's temporary output f (moved in, or copied, as for fk_cache_register) as the object id and
 * holds it: pinned, never evicted, until released; served to peers like any object. Returns 1 when held;
 * 0 when it cannot be (larger than the cache, or no room beside what is pinned), the file left where it
 * was for the caller to write through; -1 with err on an I/O error. */
int fk_cache_hold(fk_cache *c, const char *id, fk_outfile *f, char *err, size_t errlen);
/* Lets held objects go: evictable like any other from now on (ids not held are ignored). */
void fk_cache_unhold(fk_cache *c, const fk_str *ids, size_t n);
/* Lets every held object go (a new dispatcher session). */
void fk_cache_unhold_all(fk_cache *c);
/* How many objects are held. */
size_t fk_cache_held(fk_cache *c);

/* A multicast step (REPLICATE): fetches the object into the cache on a thread of its own, from the
 * peers named, else the store, verified as any fetch; its arrival reaches the listener like any
 * other. fk_cache_close waits for these threads. */
void fk_cache_replicate(fk_cache *c, const fk_replica *r);

/* Seed 004's collective gather: brings those of refs[0..n) (stored forms; the others are skipped)
 * that the cache does not hold and no one here is fetching from peer in one request (fk_batch_fetch),
 * instead of one each. out[i] is refs[i] leased (pinned, source FK_SRC_PEER) when it arrived, zeroed
 * (path NULL) when not: a task's own fk_cache_lease then fetches it from elsewhere. Returns how many
 * arrived. */
size_t fk_cache_gather(fk_cache *c, const char *peer, const fk_input *const *refs, size_t n, fk_lease *out);

/* Pins a stored-form object for a peer; 0 if held, -1 if not. */
int fk_cache_peek(fk_cache *c, const char *id, fk_lease *out);

/* Every stored-form object (for the full summary); free with fk_cached_free. */
size_t fk_cache_contents(fk_cache *c, fk_cached **out);
void fk_cached_free(fk_cached *list, size_t n);

#endif
