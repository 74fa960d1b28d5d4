#include "peer.h"

#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#define IO_TIMEOUT_S 60
#define CONNECT_TIMEOUT_MS 10000
#define MAX_HEADER 16384
#define MAX_CONNECTIONS 64

char *fk_url_encode(const char *s) {
    size_t n = strlen(s);
    char *out = malloc(3 * n + 1);
    if (!out) {
        abort();
    }
    static const char hex[] = "0123456789ABCDEF";
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-'
            || c == '*' || c == '_') {
            out[k++] = (char)c;
        } else if (c == ' ') {
            out[k++] = '+';
        } else {
            out[k++] = '%';
            out[k++] = hex[c >> 4];
            out[k++] = hex[c & 15];
        }
    }
    out[k] = 0;
    return out;
}

static int hexval(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Decodes %XX and '+' in place; -1 if malformed. */
static int url_decode(char *s) {
    char *w = s;
    for (char *r = s; *r; r++) {
        if (*r == '+') {
            *w++ = ' ';
        } else if (*r == '%') {
            int hi = hexval(r[1]), lo = hi < 0 ? -1 : hexval(r[2]);
            if (hi < 0 || lo < 0) {
                return -1;
            }
            *w++ = (char)(hi * 16 + lo);
            r += 2;
        } else {
            *w++ = *r;
        }
    }
    *w = 0;
    return 0;
}

static void set_timeouts(int fd) {
    struct timeval tv = {.tv_sec = IO_TIMEOUT_S, .tv_usec = 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static int write_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n > 0) {
        ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return -1;
        }
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static int connect_to(const char *host, const char *port, char *err, size_t errlen) {
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve %s: %s", host, gai_strerror(rc));
        return -1;
    }
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        freeaddrinfo(res);
        return -1;
    }
    rc = connect(fd, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    if (rc != 0 && errno == EINPROGRESS) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int ready = poll(&p, 1, CONNECT_TIMEOUT_MS);
        int soerr = 0;
        socklen_t len = sizeof soerr;
        if (ready == 1) {
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
            rc = soerr ? -1 : 0;
            errno = soerr;
        } else {
            rc = -1;
            if (ready == 0) {
                errno = ETIMEDOUT;
            }
        }
    }
    if (rc != 0) {
        snprintf(err, errlen, "cannot connect to %s:%s: %s", host, port, strerror(errno));
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    set_timeouts(fd);
    return fd;
}

/* A buffered reader over a socket, for headers and chunked bodies. */
typedef struct {
    int fd;
    char buf[16384];
    size_t at, len;
} reader;

static ssize_t rd_fill(reader *r) {
    if (r->at < r->len) {
        return (ssize_t)(r->len - r->at);
    }
    for (;;) {
        ssize_t n = recv(r->fd, r->buf, sizeof r->buf, 0);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        r->at = 0;
        r->len = n > 0 ? (size_t)n : 0;
        return n;
    }
}

/* One line without its CRLF; -1 on EOF or error or a line too long. */
static int rd_line(reader *r, char *line, size_t cap) {
    size_t k = 0;
    for (;;) {
        if (rd_fill(r) <= 0) {
            return -1;
        }
        char c = r->buf[r->at++];
        if (c == '\n') {
            if (k > 0 && line[k - 1] == '\r') {
                k--;
            }
            line[k] = 0;
            return (int)k;
        }
        if (k + 1 >= cap) {
            return -1;
        }
        line[k++] = c;
    }
}

/* Streams up to n bytes (n < 0: until EOF) to sink. Returns 0, or -1. */
static int rd_body(reader *r, int64_t n, fk_sink sink, void *ctx, char *err, size_t errlen) {
    while (n != 0) {
        ssize_t got = rd_fill(r);
        if (got < 0) {
            snprintf(err, errlen, "reading the body: %s", strerror(errno));
            return -1;
        }
        if (got == 0) {
            if (n < 0) {
                return 0;
            }
            snprintf(err, errlen, "the connection closed with %lld bytes of the body missing", (long long)n);
            return -1;
        }
        size_t take = n >= 0 && (int64_t)got > n ? (size_t)n : (size_t)got;
        if (sink(ctx, r->buf + r->at, take) != 0) {
            return -1;
        }
        r->at += take;
        if (n > 0) {
            n -= (int64_t)take;
        }
    }
    return 0;
}

int fk_http_get(const char *url, const char *token, char *sha, fk_sink sink, void *ctx, char *err, size_t errlen) {
    if (sha) {
        sha[0] = 0;
    }
    if (strncmp(url, "https://", 8) == 0) {
        snprintf(err, errlen, "%s: https sources need the Java executor (the C executor speaks plain http)", url);
        return -1;
    }
    if (strncmp(url, "http://", 7) != 0) {
        snprintf(err, errlen, "%s is not an http:// URL", url);
        return -1;
    }
    const char *hp = url + 7;
    const char *slash = strchr(hp, '/');
    size_t hplen = slash ? (size_t)(slash - hp) : strlen(hp);
    const char *path = slash ? slash : "/";
    char host[256], port[16] = "80";
    if (hplen == 0 || hplen >= sizeof host) {
        snprintf(err, errlen, "%s: bad host", url);
        return -1;
    }
    memcpy(host, hp, hplen);
    host[hplen] = 0;
    char *colon = strrchr(host, ':');
    if (host[0] == '[') { /* [v6]:port */
        char *close = strchr(host, ']');
        if (close && close[1] == ':') {
            snprintf(port, sizeof port, "%s", close + 2);
        }
        if (close) {
            *close = 0;
        }
        memmove(host, host + 1, strlen(host));
    } else if (colon) {
        snprintf(port, sizeof port, "%s", colon + 1);
        *colon = 0;
    }
    int fd = connect_to(host, port, err, errlen);
    if (fd < 0) {
        return -1;
    }
    int auth = token && *token;
    size_t reqcap = strlen(path) + hplen + 160 + (auth ? strlen(token) : 0);
    char *req = malloc(reqcap);
    if (!req) {
        abort();
    }
    int reqlen = snprintf(req, reqcap,
                          "GET %s HTTP/1.1\r\nHost: %.*s\r\nUser-Agent: falkon-c/0.1.0\r\n%s%s%sConnection: close\r\n\r\n",
                          path, (int)hplen, hp, auth ? "Authorization: Bearer " : "", auth ? token : "",
                          auth ? "\r\n" : "");
    int rc = write_all(fd, req, (size_t)reqlen);
    free(req);
    if (rc != 0) {
        snprintf(err, errlen, "%s: sending the request: %s", url, strerror(errno));
        close(fd);
        return -1;
    }
    reader *r = calloc(1, sizeof *r);
    if (!r) {
        abort();
    }
    r->fd = fd;
    char line[MAX_HEADER];
    int status = -1;
    if (rd_line(r, line, sizeof line) < 0 || sscanf(line, "HTTP/%*d.%*d %d", &status) != 1) {
        snprintf(err, errlen, "%s: no HTTP response", url);
        free(r);
        close(fd);
        return -1;
    }
    int64_t length = -1;
    int chunked = 0;
    for (;;) {
        int n = rd_line(r, line, sizeof line);
        if (n < 0) {
            snprintf(err, errlen, "%s: the response headers are cut off", url);
            free(r);
            close(fd);
            return -1;
        }
        if (n == 0) {
            break;
        }
        if (strncasecmp(line, "Content-Length:", 15) == 0) {
            length = strtoll(line + 15, NULL, 10);
        } else if (strncasecmp(line, "Transfer-Encoding:", 18) == 0 && strcasestr(line + 18, "chunked")) {
            chunked = 1;
        } else if (sha && strncasecmp(line, FK_SHA256_HEADER ":", sizeof FK_SHA256_HEADER) == 0) {
            const char *v = line + sizeof FK_SHA256_HEADER;
            while (*v == ' ') {
                v++;
            }
            snprintf(sha, 65, "%.64s", v);
        }
    }
    int result;
    if (status == 404) {
        snprintf(err, errlen, "%s: not found (HTTP 404)", url);
        result = 404;
    } else if (status != 200) {
        snprintf(err, errlen, "%s answered HTTP %d", url, status);
        result = -1;
    } else if (!chunked) {
        result = rd_body(r, length, sink, ctx, err, errlen);
    } else {
        result = 0;
        for (;;) {
            if (rd_line(r, line, sizeof line) < 0) {
                snprintf(err, errlen, "%s: a chunk header is cut off", url);
                result = -1;
                break;
            }
            char *end;
            long long size = strtoll(line, &end, 16);
            if (end == line || size < 0) {
                snprintf(err, errlen, "%s: bad chunk header '%s'", url, line);
                result = -1;
                break;
            }
            if (size == 0) {
                break;
            }
            if (rd_body(r, size, sink, ctx, err, errlen) != 0 || rd_line(r, line, sizeof line) != 0) {
                result = -1;
                break;
            }
        }
    }
    free(r);
    close(fd);
    return result;
}

/* ---- the server ---- */

struct fk_peer_server {
    fk_cache *cache;
    char *token; /* "" requires none */
    int listen_fd;
    int port;
    pthread_t acceptor;
    pthread_mutex_t lock;
    pthread_cond_t idle;
    int stopping;
    int conns[MAX_CONNECTIONS];
    int nconns;
};

typedef struct {
    fk_peer_server *s;
    int fd;
} conn_arg;

static int reply(int fd, int status, const char *reason, const char *text, int keep_alive) {
    char head[512];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %zu\r\n"
                     "%sConnection: %s\r\n\r\n",
                     status, reason, strlen(text),
                     status == 401 ? "WWW-Authenticate: Bearer realm=\"falkon\"\r\n" : "",
                     keep_alive ? "keep-alive" : "close");
    return write_all(fd, head, (size_t)n) == 0 && write_all(fd, text, strlen(text)) == 0 ? 0 : -1;
}

/* Compares in constant time, so that the time taken does not tell how much of a guess was right. */
static int token_matches(const char *want, const char *got, size_t got_len) {
    size_t n = strlen(want);
    unsigned char diff = (unsigned char)(n != got_len);
    for (size_t i = 0; i < n; i++) {
        diff |= (unsigned char)(want[i] ^ (i < got_len ? got[i] : 0));
    }
    return diff == 0;
}

/* The token a header line presents (Authorization: Bearer T, or X-Falkon-Token: T), or NULL. */
static const char *presented(char *header, size_t *len) {
    char *v = NULL;
    if (strncasecmp(header, "Authorization:", 14) == 0) {
        v = header + 14;
        while (*v == ' ' || *v == '\t') {
            v++;
        }
        if (strncasecmp(v, "Bearer ", 7) != 0) {
            return NULL;
        }
        v += 7;
    } else if (strncasecmp(header, "X-Falkon-Token:", 15) == 0) {
        v = header + 15;
    } else {
        return NULL;
    }
    while (*v == ' ' || *v == '\t') {
        v++;
    }
    size_t n = strlen(v);
    while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\r')) {
        n--;
    }
    *len = n;
    return v;
}

/* Serves one request; returns whether the connection stays open. */
static int serve_one(fk_peer_server *s, reader *r) {
    char line[MAX_HEADER];
    if (rd_line(r, line, sizeof line) <= 0) {
        return 0;
    }
    char method[16], target[MAX_HEADER], version[16];
    int ok = sscanf(line, "%15s %16383s %15s", method, target, version) == 3;
    int keep_alive = ok && strcmp(version, "HTTP/1.1") == 0;
    char header[MAX_HEADER];
    int authorized = !*s->token;
    for (;;) {
        int n = rd_line(r, header, sizeof header);
        if (n < 0) {
            return 0;
        }
        if (n == 0) {
            break;
        }
        if (strncasecmp(header, "Connection:", 11) == 0) {
            keep_alive = strcasestr(header + 11, "close") == NULL && (keep_alive || strcasestr(header, "keep-alive"));
        }
        size_t tlen = 0;
        const char *t = presented(header, &tlen);
        if (t && *s->token && token_matches(s->token, t, tlen)) {
            authorized = 1;
        }
    }
    if (!authorized) {
        return reply(r->fd, 401, "Unauthorized", "present the deployment's token (Authorization: Bearer TOKEN)\n",
                     keep_alive) == 0 && keep_alive;
    }
    char *id = NULL;
    if (ok && strcmp(method, "GET") == 0 && strncmp(target, "/objects?", 9) == 0) {
        int count = 0;
        char *save = NULL; /* strtok_r: every connection has a thread of its own */
        for (char *part = strtok_r(target + 9, "&", &save); part; part = strtok_r(NULL, "&", &save)) {
            if (strncmp(part, "id=", 3) == 0) {
                id = part + 3;
                count++;
            }
        }
        if (count != 1 || url_decode(id) != 0) {
            id = NULL;
        }
    }
    if (!id) {
        return reply(r->fd, 400, "Bad Request", "expected GET /objects?id=OBJECT\n", keep_alive) == 0 && keep_alive;
    }
    fk_lease lease;
    if (fk_cache_peek(s->cache, id, &lease) != 0) {
        char text[MAX_HEADER + 32];
        snprintf(text, sizeof text, "not cached here: %s\n", id);
        return reply(r->fd, 404, "Not Found", text, keep_alive) == 0 && keep_alive;
    }
    int file = open(lease.path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (file < 0 || fstat(file, &st) != 0) {
        if (file >= 0) {
            close(file);
        }
        fk_cache_release(s->cache, &lease);
        return reply(r->fd, 500, "Internal Server Error", "cannot read the cached object\n", 0), 0;
    }
    /* what this cache recorded when the object arrived: the receiver checks the bytes against it, so
     * a copy changed here since (by anyone) is refused rather than spread */
    char head[384];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: %lld\r\n"
                     FK_SHA256_HEADER ": %s\r\nConnection: %s\r\n\r\n",
                     (long long)st.st_size, lease.sha256, keep_alive ? "keep-alive" : "close");
    int sent = write_all(r->fd, head, (size_t)n) == 0;
    off_t off = 0;
    while (sent && off < st.st_size) {
        ssize_t w = sendfile(r->fd, file, &off, (size_t)(st.st_size - off));
        if (w < 0 && errno == EINTR) {
            continue;
        }
        sent = w > 0;
    }
    close(file);
    fk_cache_release(s->cache, &lease);
    return sent && keep_alive;
}

static void *conn_main(void *p) {
    conn_arg *a = p;
    fk_peer_server *s = a->s;
    reader *r = calloc(1, sizeof *r);
    if (!r) {
        abort();
    }
    r->fd = a->fd;
    free(a);
    while (serve_one(s, r)) {
    }
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < s->nconns; i++) {
        if (s->conns[i] == r->fd) {
            s->conns[i] = s->conns[--s->nconns];
            break;
        }
    }
    close(r->fd);
    pthread_cond_broadcast(&s->idle);
    pthread_mutex_unlock(&s->lock);
    free(r);
    return NULL;
}

static void *accept_main(void *p) {
    fk_peer_server *s = p;
    for (;;) {
        int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        pthread_mutex_lock(&s->lock);
        int stopping = s->stopping;
        pthread_mutex_unlock(&s->lock);
        if (stopping) {
            if (fd >= 0) {
                close(fd);
            }
            return NULL;
        }
        if (fd < 0) {
            if (errno != EINTR && errno != ECONNABORTED) {
                fk_warn("cache server: accept: %s", strerror(errno));
                poll(NULL, 0, 100); /* e.g. out of descriptors: do not spin */
            }
            continue;
        }
        set_timeouts(fd);
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        pthread_mutex_lock(&s->lock);
        if (s->nconns == MAX_CONNECTIONS) {
            pthread_mutex_unlock(&s->lock);
            reply(fd, 503, "Service Unavailable", "too many peers at once; try another source\n", 0);
            close(fd);
            continue;
        }
        s->conns[s->nconns++] = fd;
        pthread_mutex_unlock(&s->lock);
        conn_arg *a = malloc(sizeof *a);
        if (!a) {
            abort();
        }
        a->s = s;
        a->fd = fd;
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 256 * 1024);
        if (pthread_create(&t, &attr, conn_main, a) != 0) {
            pthread_mutex_lock(&s->lock);
            s->conns[--s->nconns] = -1;
            pthread_mutex_unlock(&s->lock);
            close(fd);
            free(a);
        }
        pthread_attr_destroy(&attr);
    }
}

fk_peer_server *fk_peer_start(fk_cache *cache, int port, const char *token, char *err, size_t errlen) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return NULL;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY); /* peers on other nodes */
    a.sin_port = htons((uint16_t)port);
    socklen_t len = sizeof a;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 128) != 0
        || getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        snprintf(err, errlen, "cannot listen on port %d: %s", port, strerror(errno));
        close(fd);
        return NULL;
    }
    fk_peer_server *s = calloc(1, sizeof *s);
    if (!s) {
        abort();
    }
    s->cache = cache;
    s->token = strdup(token ? token : "");
    if (!s->token) {
        abort();
    }
    s->listen_fd = fd;
    s->port = ntohs(a.sin_port);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->idle, NULL);
    if (pthread_create(&s->acceptor, NULL, accept_main, s) != 0) {
        snprintf(err, errlen, "cannot start the cache server thread");
        close(fd);
        free(s);
        return NULL;
    }
    return s;
}

int fk_peer_port(const fk_peer_server *s) {
    return s->port;
}

void fk_peer_stop(fk_peer_server *s) {
    pthread_mutex_lock(&s->lock);
    s->stopping = 1;
    for (int i = 0; i < s->nconns; i++) {
        shutdown(s->conns[i], SHUT_RDWR); /* ends their reads; each thread then closes its socket */
    }
    pthread_mutex_unlock(&s->lock);
    shutdown(s->listen_fd, SHUT_RDWR); /* wakes accept */
    pthread_join(s->acceptor, NULL);
    close(s->listen_fd);
    pthread_mutex_lock(&s->lock);
    while (s->nconns > 0) {
        pthread_cond_wait(&s->idle, &s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->idle);
    free(s->token);
    free(s);
}
