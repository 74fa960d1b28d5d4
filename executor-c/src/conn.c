#include "conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { CONNECTING = 1, HANDSHAKING = 2, OPEN = 3 };

struct fk_tls {
    SSL_CTX *ctx;
};

static void ssl_why(char *why, size_t whylen, const char *what) {
    unsigned long e = ERR_get_error();
    char buf[256] = "";
    if (e) {
        ERR_error_string_n(e, buf, sizeof buf);
    }
    snprintf(why, whylen, "%s%s%s", what, *buf ? ": " : "", buf);
    ERR_clear_error();
}

fk_tls *fk_tls_client(const char *ca_file, char *err, size_t errlen) {
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) {
        ssl_why(err, errlen, "cannot create a TLS context");
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    int ok = ca_file ? SSL_CTX_load_verify_locations(ctx, ca_file, NULL) : SSL_CTX_set_default_verify_paths(ctx);
    if (ok != 1) {
        char what[512];
        snprintf(what, sizeof what, "cannot load the CA certificates%s%s", ca_file ? " from " : "",
                 ca_file ? ca_file : "");
        ssl_why(err, errlen, what);
        SSL_CTX_free(ctx);
        return NULL;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    fk_tls *t = calloc(1, sizeof *t);
    if (!t) {
        abort();
    }
    t->ctx = ctx;
    return t;
}

void fk_tls_free(fk_tls *t) {
    if (t) {
        SSL_CTX_free(t->ctx);
        free(t);
    }
}

void fk_conn_init(fk_conn *c, fk_tls *tls) {
    memset(c, 0, sizeof *c);
    c->fd = -1;
    c->wfd = -1;
    c->tls = tls;
    fk_buf_init(&c->in);
    fk_buf_init(&c->out);
}

int fk_conn_dial(fk_conn *c, const char *host, int port, char *why, size_t whylen) {
    char p[16];
    snprintf(p, sizeof p, "%d", port);
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, p, &hints, &res);
    if (rc != 0) {
        snprintf(why, whylen, "cannot resolve %s: %s", host, gai_strerror(rc));
        return -1;
    }
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(why, whylen, "socket: %s", strerror(errno));
        freeaddrinfo(res);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    rc = connect(fd, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    if (rc != 0 && errno != EINPROGRESS) {
        snprintf(why, whylen, "%s", strerror(errno));
        close(fd);
        return -1;
    }
    c->fd = fd;
    c->wfd = fd;
    c->host = host;
    c->state = CONNECTING;
    c->in.len = 0;
    c->out.len = 0;
    c->ssl_wants_write = 0;
    return 0;
}

int fk_probe(const char *host, int port, int timeout_ms, char *why, size_t whylen) {
    fk_conn c;
    fk_conn_init(&c, NULL);
    if (fk_conn_dial(&c, host, port, why, whylen) != 0) {
        return -1;
    }
    struct pollfd p = {.fd = c.fd, .events = POLLOUT};
    int rc = poll(&p, 1, timeout_ms);
    int err = 0;
    socklen_t len = sizeof err;
    if (rc <= 0) {
        snprintf(why, whylen, "%s", rc == 0 ? "timed out" : strerror(errno));
        rc = -1;
    } else if (getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
        snprintf(why, whylen, "%s", strerror(err ? err : errno));
        rc = -1;
    } else {
        rc = 0;
    }
    close(c.fd);
    fk_buf_free(&c.in);
    fk_buf_free(&c.out);
    return rc;
}

void fk_conn_attach(fk_conn *c, int rfd, int wfd) {
    c->fd = rfd;
    c->wfd = wfd;
    c->host = "stdio";
    c->state = OPEN;
    c->in.len = 0;
    c->out.len = 0;
    c->ssl_wants_write = 0;
}

int fk_conn_piped(const fk_conn *c) {
    return c->fd >= 0 && c->wfd != c->fd;
}

int fk_conn_open(const fk_conn *c) {
    return c->fd >= 0 && c->state == OPEN;
}

short fk_conn_events(const fk_conn *c) {
    if (fk_conn_piped(c)) {
        return POLLIN; /* the pipe written to (wfd) is polled on its own */
    }
    if (c->state == CONNECTING) {
        return POLLOUT;
    }
    if (c->state == HANDSHAKING) {
        return c->ssl_wants_write ? POLLOUT : POLLIN;
    }
    return (short)(POLLIN | (c->out.len || c->ssl_wants_write ? POLLOUT : 0));
}

/* The TLS handshake, one step: 1 done, 0 more to do, -1 failed. */
static int handshake(fk_conn *c, char *why, size_t whylen) {
    SSL *ssl = c->ssl;
    int rc = SSL_connect(ssl);
    if (rc == 1) {
        c->state = OPEN;
        c->ssl_wants_write = 0;
        return 1;
    }
    int e = SSL_get_error(ssl, rc);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        c->ssl_wants_write = e == SSL_ERROR_WANT_WRITE;
        return 0;
    }
    long verify = SSL_get_verify_result(ssl);
    if (verify != X509_V_OK) {
        snprintf(why, whylen, "TLS handshake with %s: the dispatcher's certificate is not trusted: %s", c->host,
                 X509_verify_cert_error_string(verify));
        ERR_clear_error();
    } else {
        char what[300];
        snprintf(what, sizeof what, "TLS handshake with %s failed", c->host);
        ssl_why(why, whylen, what);
    }
    return -1;
}

int fk_conn_progress(fk_conn *c, char *why, size_t whylen) {
    if (c->state == CONNECTING) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) {
            snprintf(why, whylen, "%s", strerror(err));
            return -1;
        }
        if (!c->tls) {
            c->state = OPEN;
            return 1;
        }
        SSL *ssl = SSL_new(c->tls->ctx);
        if (!ssl) {
            ssl_why(why, whylen, "SSL_new");
            return -1;
        }
        SSL_set_fd(ssl, c->fd);
        /* the certificate must name the host dialled: an IP address, or a DNS name (also sent as SNI) */
        unsigned char addr[16];
        if (inet_pton(AF_INET, c->host, addr) == 1 || inet_pton(AF_INET6, c->host, addr) == 1) {
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), c->host);
        } else {
            SSL_set_tlsext_host_name(ssl, c->host);
            SSL_set1_host(ssl, c->host);
        }
        c->ssl = ssl;
        c->state = HANDSHAKING;
    }
    if (c->state == HANDSHAKING) {
        return handshake(c, why, whylen);
    }
    return 1;
}

long fk_conn_read(fk_conn *c, char *why, size_t whylen) {
    long total = 0;
    for (;;) {
        fk_buf_reserve(&c->in, 65536);
        size_t room = c->in.cap - c->in.len;
        ssize_t n;
        if (c->ssl) {
            int r = SSL_read(c->ssl, c->in.data + c->in.len, room > INT32_MAX ? INT32_MAX : (int)room);
            if (r > 0) {
                n = r;
            } else {
                int e = SSL_get_error(c->ssl, r);
                if (e == SSL_ERROR_WANT_READ) {
                    return total;
                }
                if (e == SSL_ERROR_WANT_WRITE) {
                    c->ssl_wants_write = 1;
                    return total;
                }
                if (e == SSL_ERROR_ZERO_RETURN) {
                    snprintf(why, whylen, "the connection to the dispatcher closed");
                } else {
                    ssl_why(why, whylen, "TLS read");
                }
                return -1;
            }
        } else {
            n = fk_conn_piped(c) ? read(c->fd, c->in.data + c->in.len, room) : recv(c->fd, c->in.data + c->in.len, room, 0);
            if (n == 0) {
                snprintf(why, whylen, "the connection to the dispatcher closed");
                return -1;
            }
            if (n < 0) {
                if (errno == EINTR) {
                    continue;
                }
                if (errno == EAGAIN || errno == EWOULDBLOCK) {
                    return total;
                }
                snprintf(why, whylen, "connection failed: %s", strerror(errno));
                return -1;
            }
        }
        c->in.len += (size_t)n;
        total += n;
        if ((size_t)n < room && !(c->ssl && SSL_pending(c->ssl) > 0)) {
            return total;
        }
    }
}

int fk_conn_write(fk_conn *c, char *why, size_t whylen) {
    c->ssl_wants_write = 0;
    while (c->out.len > 0) {
        ssize_t n;
        if (c->ssl) {
            int w = SSL_write(c->ssl, c->out.data, c->out.len > INT32_MAX ? INT32_MAX : (int)c->out.len);
            if (w > 0) {
                n = w;
            } else {
                int e = SSL_get_error(c->ssl, w);
                if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) {
                    c->ssl_wants_write = e == SSL_ERROR_WANT_WRITE;
                    return 0;
                }
                ssl_why(why, whylen, "TLS write");
                return -1;
            }
        } else {
            /* a pipe has no MSG_NOSIGNAL: the executor ignores SIGPIPE (executor.c), so a parent gone is EPIPE */
            n = fk_conn_piped(c) ? write(c->wfd, c->out.data, c->out.len) : send(c->fd, c->out.data, c->out.len, MSG_NOSIGNAL);
            if (n < 0) {
                if (errno == EINTR) {
                    continue;
                }
                if (errno == EAGAIN || errno == EWOULDBLOCK) {
                    return 0;
                }
                snprintf(why, whylen, "connection failed: %s", strerror(errno));
                return -1;
            }
        }
        fk_buf_consume(&c->out, (size_t)n);
    }
    return 0;
}

void fk_conn_close(fk_conn *c) {
    if (c->ssl) {
        SSL_free(c->ssl); /* no close_notify: the socket is closed at once either way */
        c->ssl = NULL;
    }
    if (c->wfd >= 0 && c->wfd != c->fd) {
        close(c->wfd);
    }
    c->wfd = -1;
    if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
    }
    c->state = 0;
    c->in.len = 0;
    c->out.len = 0;
    c->ssl_wants_write = 0;
}

void fk_conn_destroy(fk_conn *c) {
    fk_conn_close(c);
    fk_buf_free(&c->in);
    fk_buf_free(&c->out);
}
