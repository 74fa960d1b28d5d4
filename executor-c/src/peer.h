/* The server that shares this executor's cache with its peers, with the same interface as the
 * Java PeerServer: GET /objects?id=ID answers 200 with the object's bytes (the object pinned
 * meanwhile) or 404 when it is not cached here, to peers that present the deployment's token
 * (401 otherwise). Plain HTTP/1.1 (http.h); the fetching side is fk_http_get. */
#ifndef FK_PEER_H
#define FK_PEER_H

#include "cache.h"

typedef struct fk_peer_server fk_peer_server;

/* Serves cache on 0.0.0.0:port (0: any free port) to peers presenting token (Authorization: Bearer,
 * or X-Falkon-Token; "" requires none). NULL with err on failure. */
fk_peer_server *fk_peer_start(fk_cache *cache, int port, const char *token, char *err, size_t errlen);
/* BENCHMARKING ONLY (--emulate-uplink): what the server sends, over all its connections together, at
 * most bytes_per_second, as through a network link of that speed (an emulation: loopback has none). */
void fk_peer_emulate_uplink(fk_peer_server *s, int64_t bytes_per_second);
int fk_peer_port(const fk_peer_server *s);
/* Stops serving, ends open connections, and frees the server. */
void fk_peer_stop(fk_peer_server *s);

/* The 512-byte ustar header of a regular file called name (under 100 bytes) of size bytes, as a
 * batch answer carries before each object. */
void fk_tar_header(unsigned char *h, const char *name, int64_t size);

#endif
