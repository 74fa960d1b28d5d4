#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fk_buf_init(fk_buf *b) {
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void fk_buf_free(fk_buf *b) {
    free(b->data);
    fk_buf_init(b);
}

void fk_buf_reserve(fk_buf *b, size_t more) {
    if (b->len + more <= b->cap) {
        return;
    }
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more) {
        cap *= 2;
    }
    uint8_t *d = realloc(b->data, cap);
    if (!d) {
        fprintf(stderr, "falkon-executor-c: out of memory\n");
        abort();
    }
    b->data = d;
    b->cap = cap;
}

void fk_buf_put(fk_buf *b, const void *p, size_t n) {
    if (n == 0) {
        return;
    }
    fk_buf_reserve(b, n);
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void fk_buf_u8(fk_buf *b, uint8_t v) {
    fk_buf_put(b, &v, 1);
}

void fk_buf_u16(fk_buf *b, uint16_t v) {
    uint8_t x[2] = {(uint8_t)(v >> 8), (uint8_t)v};
    fk_buf_put(b, x, 2);
}

void fk_buf_u32(fk_buf *b, uint32_t v) {
    uint8_t x[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    fk_buf_put(b, x, 4);
}

void fk_buf_u64(fk_buf *b, uint64_t v) {
    fk_buf_u32(b, (uint32_t)(v >> 32));
    fk_buf_u32(b, (uint32_t)v);
}

void fk_buf_blob(fk_buf *b, const void *p, size_t n) {
    fk_buf_u32(b, (uint32_t)n);
    fk_buf_put(b, p, n);
}

void fk_buf_set_u32(fk_buf *b, size_t at, uint32_t v) {
    b->data[at] = (uint8_t)(v >> 24);
    b->data[at + 1] = (uint8_t)(v >> 16);
    b->data[at + 2] = (uint8_t)(v >> 8);
    b->data[at + 3] = (uint8_t)v;
}

void fk_buf_consume(fk_buf *b, size_t n) {
    if (n >= b->len) {
        b->len = 0;
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
}

uint32_t fk_get_u32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

void fk_reader_init(fk_reader *r, const uint8_t *p, size_t n) {
    r->p = p;
    r->left = n;
    r->err[0] = 0;
}

int fk_reader_ok(const fk_reader *r) {
    return r->err[0] == 0;
}

void fk_reader_fail(fk_reader *r, const char *fmt, ...) {
    if (r->err[0]) {
        return; /* keep the first error: it names the field that went wrong */
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof r->err, fmt, ap);
    va_end(ap);
    r->left = 0;
}

static int need(fk_reader *r, size_t n, const char *field) {
    if (r->err[0]) {
        return 0;
    }
    if (r->left < n) {
        fk_reader_fail(r, "%s: truncated (needs %zu bytes, %zu left)", field, n, r->left);
        return 0;
    }
    return 1;
}

uint8_t fk_rd_u8(fk_reader *r, const char *field) {
    if (!need(r, 1, field)) {
        return 0;
    }
    uint8_t v = r->p[0];
    r->p += 1;
    r->left -= 1;
    return v;
}

uint16_t fk_rd_u16(fk_reader *r, const char *field) {
    if (!need(r, 2, field)) {
        return 0;
    }
    uint16_t v = (uint16_t)((r->p[0] << 8) | r->p[1]);
    r->p += 2;
    r->left -= 2;
    return v;
}

uint32_t fk_rd_u32(fk_reader *r, const char *field) {
    if (!need(r, 4, field)) {
        return 0;
    }
    uint32_t v = fk_get_u32(r->p);
    r->p += 4;
    r->left -= 4;
    return v;
}

uint32_t fk_rd_u31(fk_reader *r, const char *field) {
    uint32_t v = fk_rd_u32(r, field);
    if (v > 0x7FFFFFFFu) {
        fk_reader_fail(r, "%s: %u is over 2^31-1", field, v);
        return 0;
    }
    return v;
}

uint64_t fk_rd_u64(fk_reader *r, const char *field) {
    if (!need(r, 8, field)) { /* all 8 at once: a short one is named as what it is, not as its first half */
        return 0;
    }
    uint64_t hi = fk_rd_u32(r, field);
    uint64_t lo = fk_rd_u32(r, field);
    return (hi << 32) | lo;
}

uint32_t fk_rd_count(fk_reader *r, const char *field, size_t min_each) {
    uint32_t n = fk_rd_u31(r, field);
    if (fk_reader_ok(r) && (uint64_t)n * min_each > r->left) {
        fk_reader_fail(r, "%s: count %u cannot fit in the %zu bytes left", field, n, r->left);
        return 0;
    }
    return n;
}

const uint8_t *fk_rd_blob(fk_reader *r, const char *field, size_t *n) {
    uint32_t len = fk_rd_count(r, field, 1);
    if (!fk_reader_ok(r)) {
        *n = 0;
        return NULL;
    }
    const uint8_t *p = r->p;
    r->p += len;
    r->left -= len;
    *n = len;
    return p;
}

char *fk_rd_str(fk_reader *r, const char *field, size_t *n) {
    size_t len;
    const uint8_t *p = fk_rd_blob(r, field, &len);
    if (!p) {
        if (n) {
            *n = 0;
        }
        return NULL;
    }
    char *s = malloc(len + 1);
    if (!s) {
        abort();
    }
    memcpy(s, p, len);
    s[len] = 0;
    if (n) {
        *n = len;
    }
    return s;
}

void fk_rd_end(fk_reader *r, const char *what) {
    if (fk_reader_ok(r) && r->left != 0) {
        fk_reader_fail(r, "%s: %zu unexpected trailing bytes", what, r->left);
    }
}
