/* The executor's local data cache (data diffusion), with the Java CacheStore's semantics
 * (docs/data-diffusion.md): up to a byte capacity of write-once objects stored under the
 * SHA-256 of their key; a lease pins an object and is a local hit, or a fetch made once however
 * many slots ask at the same time (single flight) from the peers in the hints, then the shared
 * store, with size and checksum verified; unpacked forms cached too; room made by evicting
 * unpinned objects in least-recently-used order; every add and eviction of a stored-form object
 * reported to the listener. */
#ifndef FK_CACHE_H
#define FK_CACHE_H

#include "proto.h"

#include <stdint.h>

enum fk_source { FK_SRC_LOCAL = 0, FK_SRC_PEER = 1, FK_SRC_STORE = 2 };

typedef struct fk_cache fk_cache;
typedef struct fk_entry fk_entry;

/* Told (on the thread that made the change) about objects added (size >= 0) or removed (-1). */
typedef void (*fk_cache_listener)(void *ctx, const char *id, int64_t size);

typedef struct {
    fk_entry *entry;
    const char *path; /* the cached file or directory, valid while leased */
    int64_t size;
    int source;       /* enum fk_source */
    int64_t moved;    /* bytes that travelled to get it */
} fk_lease;

/* dir is emptied first; store_root resolves relative sources (may be NULL); token is what peers'
 * cache servers require ("" for none). NULL on error. */
fk_cache *fk_cache_open(const char *dir, int64_t capacity, const char *store_root, const char *token,
                        fk_cache_listener listener, void *ctx, char *err, size_t errlen);
void fk_cache_close(fk_cache *c);
int64_t fk_cache_capacity(const fk_cache *c);

/* Pins the object in ref (fetching it if needed); peers are host:port of peers that may hold it.
 * Returns 0, or -1 with err saying why no source could provide it. */
int fk_cache_lease(fk_cache *c, const fk_input *ref, const fk_str *peers, size_t npeers, fk_lease *out, char *err,
                   size_t errlen);
void fk_cache_release(fk_cache *c, fk_lease *l);

/* Adopts file (moved in) as the object id. */
int fk_cache_register(fk_cache *c, const char *id, const char *file, char *err, size_t errlen);

/* Pins a stored-form object for a peer; 0 if held, -1 if not. */
int fk_cache_peek(fk_cache *c, const char *id, fk_lease *out);

/* Every stored-form object (for the full summary); free with fk_cached_free. */
size_t fk_cache_contents(fk_cache *c, fk_cached **out);
void fk_cached_free(fk_cached *list, size_t n);

/* Copies ref's stored form from the shared store to out (no cache): verified. Returns the bytes,
 * or -1 with err. */
int64_t fk_store_copy(const char *store_root, const fk_input *ref, const char *out, char *err, size_t errlen);
/* Unpacks packed into target (unpack mode 1 gzip, 2 tar, 3 tar.gz); returns bytes written or -1. */
int64_t fk_unpack(const char *packed, int mode, const char *target, char *err, size_t errlen);

#endif
