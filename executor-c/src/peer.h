/* HTTP for data diffusion: the client that fetches objects from the shared store (http://) and
 * from peers, and the server that shares this executor's cache with its peers with the same
 * interface as the Java PeerServer: GET /objects?id=ID answers 200 with the object's bytes
 * (the object pinned meanwhile) or 404 when it is not cached here, to peers that present the
 * deployment's token (401 otherwise). Plain HTTP/1.1 only: an https:// source needs the Java
 * executor. */
#ifndef FK_PEER_H
#define FK_PEER_H

#include "cache.h"

#include <stddef.h>
#include <stdint.h>

/* Receives the body in pieces; returns 0 to go on, -1 to stop (err set by the sink). */
typedef int (*fk_sink)(void *ctx, const void *data, size_t len);

/* The header with which a peer says what it recorded of the object it sends (its SHA-256). */
#define FK_SHA256_HEADER "X-Falkon-SHA256"

/* GETs url and streams the body to sink, presenting token (NULL or "": none); with sha (65 bytes,
 * or NULL) it receives the X-Falkon-SHA256 header's value ("" if absent). Returns 0 on 200;
 * 404 when not found; -1 otherwise, with err saying why. */
int fk_http_get(const char *url, const char *token, char *sha, fk_sink sink, void *ctx, char *err, size_t errlen);

/* url-encodes like java.net.URLEncoder (UTF-8 bytes; space as '+'). Caller frees. */
char *fk_url_encode(const char *s);

typedef struct fk_peer_server fk_peer_server;

/* Serves cache on 0.0.0.0:port (0: any free port) to peers presenting token (Authorization: Bearer,
 * or X-Falkon-Token; "" requires none). NULL with err on failure. */
fk_peer_server *fk_peer_start(fk_cache *cache, int port, const char *token, char *err, size_t errlen);
int fk_peer_port(const fk_peer_server *s);
/* Stops serving, ends open connections, and frees the server. */
void fk_peer_stop(fk_peer_server *s);

#endif
