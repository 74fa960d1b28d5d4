/* HTTP/1.1 over a blocking socket, for data diffusion: the client that fetches objects from the
 * shared store (http://) and from peers (fk_http_get), and the pieces the peer server (peer.h)
 * shares with it: a buffered reader, whole writes, socket timeouts, URL encoding. Plain HTTP only:
 * an https:// source needs the Java executor. */
#ifndef FK_HTTP_H
#define FK_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Receives the body in pieces; returns 0 to go on, -1 to stop (err set by the sink). */
typedef int (*fk_sink)(void *ctx, const void *data, size_t len);

/* The header with which a peer says what it recorded of the object it sends (its SHA-256). */
#define FK_SHA256_HEADER "X-Falkon-SHA256"

/* The longest request, status or header line read; a longer one fails the exchange. */
#define FK_HTTP_MAX_HEADER 16384
/* A socket read or write that makes no progress for this long fails. */
#define FK_HTTP_IO_TIMEOUT_S 60

/* GETs url and streams the body to sink, presenting token (NULL or "": none); with sha (65 bytes,
 * or NULL) it receives the X-Falkon-SHA256 header's value ("" if absent). Returns 0 on 200;
 * 404 when not found; -1 otherwise, with err saying why. */
int fk_http_get(const char *url, const char *token, char *sha, fk_sink sink, void *ctx, char *err, size_t errlen);

/* The same with any method, sending body (bodylen bytes, of content type type: NULL for text/plain) when it
 * is not NULL. */
int fk_http_request(const char *method, const char *url, const char *token, const char *body, size_t bodylen,
                    const char *type, char *sha, fk_sink sink, void *ctx, char *err, size_t errlen);

/* url-encodes like java.net.URLEncoder (UTF-8 bytes; space as '+'). Caller frees. */
char *fk_url_encode(const char *s);
/* Decodes %XX and '+' in place; returns the decoded length (a %00 inside counts: check it as bytes, never
 * as a C string), or -1 if malformed. */
long fk_url_decode(char *s);

/* A buffered reader over a socket, for headers and chunked bodies. */
typedef struct {
    int fd;
    char buf[16384];
    size_t at, len;
} fk_http_reader;

/* Bytes buffered, reading more when none are: > 0, 0 at EOF, < 0 on error. */
ssize_t fk_http_fill(fk_http_reader *r);
/* One line without its CRLF into line (cap bytes); its length, or -1 on EOF, error or a line too long. */
int fk_http_line(fk_http_reader *r, char *line, size_t cap);
/* Streams up to n bytes (n < 0: until EOF) to sink. Returns 0, or -1. */
int fk_http_body(fk_http_reader *r, int64_t n, fk_sink sink, void *ctx, char *err, size_t errlen);

/* Sets the socket's read and write timeouts to FK_HTTP_IO_TIMEOUT_S. */
void fk_http_timeouts(int fd);

#endif
