/* SHA-256 and MD5, for verifying fetched objects and naming cache files the same way the Java
 * executor does: OpenSSL's libcrypto (EVP), already linked for TLS. Streaming: init, update any
 * number of times, then hex (which ends it); a hash given up before hex is ended with fk_hash_free. */
#ifndef FK_HASH_H
#define FK_HASH_H

#include <stddef.h>

typedef struct evp_md_ctx_st EVP_MD_CTX;

typedef struct {
    EVP_MD_CTX *ctx; /* NULL once ended (or for a zeroed fk_hash never started) */
} fk_hash;

void fk_hash_init(fk_hash *h, int md5);
void fk_hash_update(fk_hash *h, const void *data, size_t len);
/* Writes the digest as lower-case hex (64 characters for SHA-256, 32 for MD5) plus a NUL, and ends the hash. */
void fk_hash_hex(fk_hash *h, char *hex);
/* Ends a hash without its digest; nothing for one already ended or never started. */
void fk_hash_free(fk_hash *h);
/* The SHA-256 of a string, as hex. */
void fk_sha256_hex(const char *s, size_t len, char hex[65]);

#endif
