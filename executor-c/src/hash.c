#include "hash.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>

/* The digests are OpenSSL's; a failure of its calls (no memory, no provider) leaves the executor
 * unable to verify anything, so it stops rather than accept unverified bytes. */
static void need(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "falkon-executor-c: libcrypto failed: %s\n", what);
        abort();
    }
}

void fk_hash_init(fk_hash *h, int md5) {
    h->ctx = EVP_MD_CTX_new();
    need(h->ctx != NULL, "EVP_MD_CTX_new");
    need(EVP_DigestInit_ex(h->ctx, md5 ? EVP_md5() : EVP_sha256(), NULL) == 1, "EVP_DigestInit_ex");
}

void fk_hash_update(fk_hash *h, const void *data, size_t len) {
    need(EVP_DigestUpdate(h->ctx, data, len) == 1, "EVP_DigestUpdate");
}

void fk_hash_hex(fk_hash *h, char *hex) {
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    need(EVP_DigestFinal_ex(h->ctx, d, &n) == 1, "EVP_DigestFinal_ex");
    static const char digits[] = "0123456789abcdef";
    for (unsigned int i = 0; i < n; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[2 * n] = '\0';
    fk_hash_free(h);
}

void fk_hash_free(fk_hash *h) {
    EVP_MD_CTX_free(h->ctx); /* NULL-safe */
    h->ctx = NULL;
}

void fk_sha256_hex(const char *s, size_t len, char hex[65]) {
    fk_hash h;
    fk_hash_init(&h, 0);
    fk_hash_update(&h, s, len);
    fk_hash_hex(&h, hex);
}
