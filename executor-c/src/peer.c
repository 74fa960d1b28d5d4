#include "peer.h"

#include "names.h"

#include "fsutil.h"
#include "http.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
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
#include <time.h>
#include <unistd.h>

#define MAX_CONNECTIONS 64
/* A batch request (POST /objects): most ids, and most bytes in its body (the Java server's too). */
#define MAX_BATCH 10000
#define MAX_BATCH_BYTES (1 << 20)
#define TAR_BLOCK 512

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
    int64_t uplink_bps;      /* emulated link (benchmarking only); 0: none */
    int64_t uplink_free_ns;  /* when the emulated link is free again */
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
    return fk_send_all(fd, head, (size_t)n) == 0 && fk_send_all(fd, text, strlen(text)) == 0 ? 0 : -1;
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

typedef struct {
    char *data;
    size_t len;
} body_buf;

static int to_body(void *ctx, const void *data, size_t len) {
    body_buf *b = ctx;
    memcpy(b->data + b->len, data, len); /* sized for the whole Content-Length up front */
    b->len += len;
    return 0;
}

void fk_tar_header(unsigned char *h, const char *name, int64_t size) {
    memset(h, 0, TAR_BLOCK);
    snprintf((char *)h, 100, "%s", name);
    memcpy(h + 100, "0000444", 8);
    memcpy(h + 108, "0000000", 8);
    memcpy(h + 116, "0000000", 8);
    snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)size);
    memcpy(h + 136, "00000000000", 12);
    h[156] = '0';
    memcpy(h + 257, "ustar", 6);
    memcpy(h + 263, "00", 2);
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (size_t i = 0; i < TAR_BLOCK; i++) {
        sum += h[i];
    }
    snprintf((char *)h + 148, 8, "%06o", sum);
    h[155] = ' ';
}

void fk_peer_emulate_uplink(fk_peer_server *s, int64_t bytes_per_second) {
    s->uplink_bps = bytes_per_second;
}

/* With an emulated uplink: waits for the link's turn to carry n more bytes (each caller books its
 * chunk on one timeline, so that all connections together keep to the rate); returns how many of
 * them to send now. */
static size_t uplink_turn(fk_peer_server *s, size_t n) {
    if (!s || s->uplink_bps <= 0) {
        return n;
    }
    size_t chunk = n < 262144 ? n : 262144;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t t = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec;
    pthread_mutex_lock(&s->lock);
    int64_t start = s->uplink_free_ns > t ? s->uplink_free_ns : t;
    s->uplink_free_ns = start + (int64_t)((double)chunk * 1e9 / (double)s->uplink_bps);
    int64_t done = s->uplink_free_ns;
    pthread_mutex_unlock(&s->lock);
    struct timespec until = {.tv_sec = done / 1000000000LL, .tv_nsec = done % 1000000000LL};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR) {
    }
    return chunk;
}

static int send_file(fk_peer_server *s, int fd, int file, int64_t size) {
    off_t off = 0;
    while (off < size) {
        ssize_t w = sendfile(fd, file, &off, uplink_turn(s, (size_t)(size - off)));
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return -1;
        }
    }
    return 0;
}

/* POST /objects: the objects named in the body (a form: id=ID&id=ID..., each percent-encoded, so that no id
 * can be read as two) that this cache holds, as one tar stream, each entry named INDEX.SHA256 (the id's
 * place in the request, this cache's record of it), pinned while it is sent. A body with anything but
 * canonical ids (names.h) is refused whole. Returns whether the connection stays open. */
static int serve_batch(fk_peer_server *s, fk_http_reader *r, int64_t length, int keep_alive) {
    if (length < 1 || length > MAX_BATCH_BYTES) {
        return reply(r->fd, length > MAX_BATCH_BYTES ? 413 : 400, length > MAX_BATCH_BYTES ? "Payload Too Large"
                     : "Bad Request", "expected POST /objects with up to 1 MiB of id=OBJECT&id=OBJECT...\n", 0), 0;
    }
    body_buf body = {malloc((size_t)length + 1), 0};
    if (!body.data) {
        abort();
    }
    char err[256];
    if (fk_http_body(r, length, to_body, &body, err, sizeof err) != 0 || body.len != (size_t)length) {
        free(body.data);
        return 0;
    }
    body.data[body.len] = 0;
    size_t nids = 1;
    for (size_t i = 0; i < body.len; i++) {
        nids += body.data[i] == '&';
    }
    if (nids > MAX_BATCH) {
        free(body.data);
        return reply(r->fd, 400, "Bad Request", "more than 10000 object ids in one request\n", keep_alive) == 0
               && keep_alive;
    }
    char **ids = calloc(nids, sizeof *ids);
    if (!ids) {
        abort();
    }
    char *save = NULL;
    size_t got = 0;
    int bad = 0;
    for (char *part = strtok_r(body.data, "&", &save); part && !bad; part = strtok_r(NULL, "&", &save)) {
        char why[160];
        long len = strncmp(part, "id=", 3) == 0 ? fk_url_decode(part + 3) : -1;
        bad = got >= nids || len < 0 || fk_id_check(part + 3, (size_t)len, why, sizeof why) != 0;
        if (!bad) {
            ids[got++] = part + 3;
        }
    }
    if (bad || got == 0) {
        free(ids);
        free(body.data);
        return reply(r->fd, 400, "Bad Request", "expected POST /objects with id=OBJECT&id=OBJECT..., each a canonical "
                     "object id, percent-encoded\n", keep_alive) == 0 && keep_alive;
    }
    nids = got;
    /* every object named and held, pinned (a file is opened only while it is sent: a batch may
     * name 10,000 objects, far more than the descriptors a process may keep open) */
    fk_lease *leases = calloc(nids, sizeof *leases);
    unsigned char *held = calloc(nids, 1);
    if (!leases || !held) {
        abort();
    }
    int64_t total = 2 * TAR_BLOCK;
    for (size_t i = 0; i < nids; i++) {
        if (fk_cache_peek(s->cache, ids[i], &leases[i]) == 0) {
            held[i] = 1;
            total += TAR_BLOCK + (leases[i].size + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
        }
    }
    free(ids);
    char head[256];
    int n = snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Type: application/x-tar\r\nContent-Length: %lld\r\n"
                     "Connection: %s\r\n\r\n", (long long)total, keep_alive ? "keep-alive" : "close");
    int sent = fk_send_all(r->fd, head, (size_t)n) == 0;
    static const unsigned char zeros[2 * TAR_BLOCK];
    for (size_t i = 0; i < nids; i++) {
        if (!held[i]) {
            continue;
        }
        if (sent) {
            unsigned char h[TAR_BLOCK];
            char name[100];
            snprintf(name, sizeof name, "%zu.%s", i, leases[i].sha256);
            fk_tar_header(h, name, leases[i].size);
            int64_t pad = (TAR_BLOCK - leases[i].size % TAR_BLOCK) % TAR_BLOCK;
            int file = open(leases[i].path, O_RDONLY | O_CLOEXEC);
            /* pinned, it is there; if not, the length promised cannot be kept: the connection ends */
            sent = file >= 0 && fk_send_all(r->fd, h, TAR_BLOCK) == 0
                   && send_file(s, r->fd, file, leases[i].size) == 0
                   && (pad == 0 || fk_send_all(r->fd, zeros, (size_t)pad) == 0);
            if (file >= 0) {
                close(file);
            }
        }
        fk_cache_release(s->cache, &leases[i]);
    }
    sent = sent && fk_send_all(r->fd, zeros, sizeof zeros) == 0;
    free(leases);
    free(held);
    free(body.data);
    return sent && keep_alive;
}

/* Serves one request; returns whether the connection stays open. */
static int serve_one(fk_peer_server *s, fk_http_reader *r) {
    char line[FK_HTTP_MAX_HEADER];
    if (fk_http_line(r, line, sizeof line) <= 0) {
        return 0;
    }
    char method[16], target[FK_HTTP_MAX_HEADER], version[16];
    int ok = sscanf(line, "%15s %16383s %15s", method, target, version) == 3;
    int keep_alive = ok && strcmp(version, "HTTP/1.1") == 0;
    char header[FK_HTTP_MAX_HEADER];
    int authorized = !*s->token;
    int64_t length = -1;
    for (;;) {
        int n = fk_http_line(r, header, sizeof header);
        if (n < 0) {
            return 0;
        }
        if (n == 0) {
            break;
        }
        if (strncasecmp(header, "Content-Length:", 15) == 0) {
            char *end;
            long long v = strtoll(header + 15, &end, 10);
            length = end == header + 15 || v < 0 ? -2 : v;
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
    if (!authorized) { /* a body it sent is not read: the connection closes */
        return reply(r->fd, 401, "Unauthorized", "present the deployment's token (Authorization: Bearer TOKEN)\n",
                     keep_alive && length <= 0) == 0 && keep_alive && length <= 0;
    }
    if (ok && strcmp(method, "POST") == 0 && strcmp(target, "/objects") == 0) {
        return serve_batch(s, r, length, keep_alive);
    }
    if (length > 0) {
        return reply(r->fd, 400, "Bad Request", "a GET has no body\n", 0), 0;
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
        char why[160];
        long len = count == 1 ? fk_url_decode(id) : -1;
        if (len < 0 || fk_id_check(id, (size_t)len, why, sizeof why) != 0) {
            id = NULL; /* a %00 would otherwise cut it short and name another object */
        }
    }
    if (!id) {
        return reply(r->fd, 400, "Bad Request", "expected GET /objects?id=OBJECT\n", keep_alive) == 0 && keep_alive;
    }
    fk_lease lease;
    if (fk_cache_peek(s->cache, id, &lease) != 0) {
        char text[FK_HTTP_MAX_HEADER + 32];
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
    int sent = fk_send_all(r->fd, head, (size_t)n) == 0;
    off_t off = 0;
    while (sent && off < st.st_size) {
        ssize_t w = sendfile(r->fd, file, &off, uplink_turn(s, (size_t)(st.st_size - off)));
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
    fk_http_reader *r = calloc(1, sizeof *r);
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
        fk_http_timeouts(fd);
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
