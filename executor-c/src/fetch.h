/* Copies of objects from the shared store (a file under its root, a file: URL, or http://) and
 * from peers, verified on arrival: hashed (SHA-256) and checked against what the task declares
 * (size, checksum) and, from a peer, against the peer's own record of it. The cache (cache.c)
 * fetches through it; a task that reads without a cache gets its copy from fk_store_copy. */
#ifndef FK_FETCH_H
#define FK_FETCH_H

#include "proto.h"

#include <stddef.h>
#include <stdint.h>

/* What a verified copy learnt of the object. */
typedef struct {
    int64_t size;
    char sha256[65];
    int64_t stamp_size, stamp_mtime; /* the store file copied: size and mtime (ns); -1: not a store file */
} fk_copied;

/* Copies from a peer (peer != NULL: host:port, presenting token) or the shared store (relative
 * sources under root) into out, hashing it and verifying it against the task's declared size and
 * checksum and, from a peer, the peer's own record. 0, or -1 with err; *permanent says the store
 * itself does not have it as declared (no executor could do better). */
int fk_copy_verified(const char *root, const char *peer, const char *token, const fk_input *ref, const char *out,
                     fk_copied *got, int *permanent, char *err, size_t errlen);

/* Seed 004's collective gather, the receiving side: asks peer (presenting token) for refs[0..n) in
 * one request (POST /objects, their ids one per line) and reads its answer, a tar stream of those it
 * holds, each entry named INDEX.SHA256 (peer.h). Each entry is copied to a new file (tmp_prefix and
 * its index) and verified as fk_copy_verified verifies a peer's copy; on_arrival gets each good one
 * and takes its file. A bad or unasked entry is dropped with a warning. Returns how many arrived, or
 * -1 when the exchange itself failed (err; what arrived before it did still went to on_arrival). */
typedef void (*fk_arrival_fn)(void *ctx, size_t index, const char *file, const fk_copied *got);
int fk_batch_fetch(const char *peer, const char *token, const fk_input *const *refs, size_t n, const char *tmp_prefix,
                   fk_arrival_fn on_arrival, void *ctx, char *err, size_t errlen);

/* Whether ref is a plain file of the store: no checksum to verify, not a URL (fk_store_open takes it). */
int fk_store_plain(const fk_input *ref);
/* Opens a plain input's file in the shared store (as fk_store_copy reads it), its size checked against the
 * declared one: the descriptor (O_RDONLY), or -1 with err and *permanent. */
int fk_store_open(const char *store_root, const fk_input *ref, int64_t *size, int *permanent, char *err,
                  size_t errlen);
/* Copies ref's stored form from the shared store to out (no cache): verified when it declares a
 * checksum, else copied by the kernel and its size checked. Returns the bytes, or -1 with err (and
 * *permanent as for fk_copy_verified). */
int64_t fk_store_copy(const char *store_root, const fk_input *ref, const char *out, int *permanent, char *err,
                      size_t errlen);

/* The store file's size and mtime (ns) now; -1, -1 when the source is not a file or is gone. */
void fk_store_stamp(const char *root, const fk_input *ref, int64_t *size, int64_t *mtime);

#endif
