/* Byte buffers for the wire protocol: a growable writer and a bounds-checked reader.
 * All integers are big-endian (docs/protocol.md section 3). */
#ifndef FK_BUF_H
#define FK_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint8_t *data;
    size_t len;
    size_t cap;
} fk_buf;

void fk_buf_init(fk_buf *b);
void fk_buf_free(fk_buf *b);
void fk_buf_reserve(fk_buf *b, size_t more);
void fk_buf_put(fk_buf *b, const void *p, size_t n);
void fk_buf_u8(fk_buf *b, uint8_t v);
void fk_buf_u16(fk_buf *b, uint16_t v);
void fk_buf_u32(fk_buf *b, uint32_t v);
void fk_buf_u64(fk_buf *b, uint64_t v);
/* A length-prefixed (u32) byte string. */
void fk_buf_blob(fk_buf *b, const void *p, size_t n);
void fk_buf_set_u32(fk_buf *b, size_t at, uint32_t v);
/* Drops the first n bytes. */
void fk_buf_consume(fk_buf *b, size_t n);

/* A reader over bytes it does not own. On any error it records a message naming the field
 * and every later read fails too, so a decoder checks once at the end. */
typedef struct {
    const uint8_t *p;
    size_t left;
    char err[256];
} fk_reader;

void fk_reader_init(fk_reader *r, const uint8_t *p, size_t n);
int fk_reader_ok(const fk_reader *r);
void fk_reader_fail(fk_reader *r, const char *fmt, ...);
uint8_t fk_rd_u8(fk_reader *r, const char *field);
uint16_t fk_rd_u16(fk_reader *r, const char *field);
uint32_t fk_rd_u32(fk_reader *r, const char *field);
/* A u32 that must be at most 2^31-1 (counts, lengths, slots, attempts). */
uint32_t fk_rd_u31(fk_reader *r, const char *field);
uint64_t fk_rd_u64(fk_reader *r, const char *field);
/* A count whose elements take at least min_each bytes: checked against what is left. */
uint32_t fk_rd_count(fk_reader *r, const char *field, size_t min_each);
/* A length-prefixed byte string: points into the input, *n set; NULL on error. */
const uint8_t *fk_rd_blob(fk_reader *r, const char *field, size_t *n);
/* The same, copied into a new NUL-terminated allocation. */
char *fk_rd_str(fk_reader *r, const char *field, size_t *n);
void fk_rd_end(fk_reader *r, const char *what);

uint32_t fk_get_u32(const uint8_t *p);

#endif
