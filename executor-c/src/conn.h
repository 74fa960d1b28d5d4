/* The executor's connection to the dispatcher as a byte pipe: a non-blocking TCP socket, with
 * TLS over it when configured (OpenSSL: the dispatcher's certificate checked against the given CA
 * and the host name dialled), or a pair of pipes from the process that started the executor
 * (--dispatcher stdio: falkon run's own executors). The poll loop in executor.c drives it:
 * fk_conn_events says what to wait for, fk_conn_progress completes the connect and the TLS
 * handshake, fk_conn_read and fk_conn_write move bytes between the socket (or pipes) and the
 * connection's buffers. */
#ifndef FK_CONN_H
#define FK_CONN_H

#include "buf.h"

#include <stddef.h>
#include <stdint.h>

typedef struct fk_tls fk_tls;

/* A TLS client context trusting ca_file (PEM), or the system's CAs when ca_file is NULL. NULL with
 * err on failure. */
fk_tls *fk_tls_client(const char *ca_file, char *err, size_t errlen);
void fk_tls_free(fk_tls *t);

typedef struct {
    int fd;         /* -1 when closed; the socket, or the pipe read from */
    int wfd;        /* what is written to: fd for a socket, the other pipe for a pair of pipes */
    int state;      /* enum in conn.c: connecting, handshaking, open */
    void *ssl;      /* SSL *, NULL for plain text */
    fk_tls *tls;    /* NULL for plain text */
    const char *host;
    fk_buf in, out; /* bytes read, bytes to write */
    int ssl_wants_write;
} fk_conn;

void fk_conn_init(fk_conn *c, fk_tls *tls);
/* Starts a non-blocking connect to host:port. 0, or -1 with why. */
int fk_conn_dial(fk_conn *c, const char *host, int port, char *why, size_t whylen);
/* The connection is a pair of pipes already open (--dispatcher stdio: the process that started the
 * executor, on its standard input and output): read from rfd, written to wfd, both non-blocking. */
void fk_conn_attach(fk_conn *c, int rfd, int wfd);
/* Whether it is a pair of pipes: fd is then polled for reading only, wfd for writing. */
int fk_conn_piped(const fk_conn *c);
/* Whether something accepts a TCP connection at host:port within timeout_ms (closed at once):
 * 0, or -1 with why. */
int fk_probe(const char *host, int port, int timeout_ms, char *why, size_t whylen);
/* Whether bytes can move (connected and, with TLS, handshake done). */
int fk_conn_open(const fk_conn *c);
/* The poll events the connection waits for now. */
short fk_conn_events(const fk_conn *c);
/* Moves the connect and the TLS handshake along: 1 when open, 0 in progress, -1 failed (why). */
int fk_conn_progress(fk_conn *c, char *why, size_t whylen);
/* Reads what is there into c->in: bytes read (> 0), 0 when nothing more now, -1 closed or failed (why). */
long fk_conn_read(fk_conn *c, char *why, size_t whylen);
/* Writes c->out as far as the socket takes: 0, or -1 failed (why). */
int fk_conn_write(fk_conn *c, char *why, size_t whylen);
void fk_conn_close(fk_conn *c);
void fk_conn_destroy(fk_conn *c);

#endif
