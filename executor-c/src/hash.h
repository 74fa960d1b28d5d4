/* SHA-256 (FIPS 180-4) and MD5 (RFC 1321), for verifying fetched objects and naming cache files
 * the same way the Java executor does. Streaming: init, update any number of times, final. */
#ifndef FK_HASH_H
#define FK_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int md5;           /* which algorithm */
    uint32_t h[8];
    uint64_t total;
    uint8_t block[64];
    size_t used;
} fk_hash;

void fk_hash_init(fk_hash *h, int md5);
void fk_hash_update(fk_hash *h, const void *data, size_t len);
/* Writes the digest as lower-case hex (64 characters for SHA-256, 32 for MD5) plus a NUL. */
void fk_hash_hex(fk_hash *h, char *hex);
/* The SHA-256 of a string, as hex. */
void fk_sha256_hex(const char *s, size_t len, char hex[65]);

#endif
