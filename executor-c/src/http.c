#include "http.h"

#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define CONNECT_TIMEOUT_MS 10000

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

long fk_url_decode(char *s) {
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
    return (long)(w - s);
}

void fk_http_timeouts(int fd) {
    struct timeval tv = {.tv_sec = FK_HTTP_IO_TIMEOUT_S, .tv_usec = 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
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
    fk_http_timeouts(fd);
    return fd;
}

ssize_t fk_http_fill(fk_http_reader *r) {
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

int fk_http_line(fk_http_reader *r, char *line, size_t cap) {
    size_t k = 0;
    for (;;) {
        if (fk_http_fill(r) <= 0) {
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

int fk_http_body(fk_http_reader *r, int64_t n, fk_sink sink, void *ctx, char *err, size_t errlen) {
    while (n != 0) {
        ssize_t got = fk_http_fill(r);
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
    return fk_http_request("GET", url, token, NULL, 0, NULL, sha, sink, ctx, err, errlen);
}

int fk_http_request(const char *method, const char *url, const char *token, const char *body, size_t bodylen,
                    const char *type,
                    char *sha, fk_sink sink, void *ctx, char *err, size_t errlen) {
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
    size_t reqcap = strlen(path) + hplen + 240 + (auth ? strlen(token) : 0);
    char *req = malloc(reqcap);
    if (!req) {
        abort();
    }
    char clen[64] = "";
    if (body) {
        snprintf(clen, sizeof clen, "Content-Type: %s\r\nContent-Length: %zu\r\n", type ? type : "text/plain", bodylen);
    }
    int reqlen = snprintf(req, reqcap,
                          "%s %s HTTP/1.1\r\nHost: %.*s\r\nUser-Agent: falkon-c/0.1.0\r\n%s%s%s%sConnection: close\r\n\r\n",
                          method, path, (int)hplen, hp, auth ? "Authorization: Bearer " : "", auth ? token : "",
                          auth ? "\r\n" : "", clen);
    int rc = fk_send_all(fd, req, (size_t)reqlen);
    free(req);
    if (rc == 0 && body) {
        rc = fk_send_all(fd, body, bodylen);
    }
    if (rc != 0) {
        snprintf(err, errlen, "%s: sending the request: %s", url, strerror(errno));
        close(fd);
        return -1;
    }
    fk_http_reader *r = calloc(1, sizeof *r);
    if (!r) {
        abort();
    }
    r->fd = fd;
    char line[FK_HTTP_MAX_HEADER];
    int status = -1;
    if (fk_http_line(r, line, sizeof line) < 0 || sscanf(line, "HTTP/%*d.%*d %d", &status) != 1) {
        snprintf(err, errlen, "%s: no HTTP response", url);
        free(r);
        close(fd);
        return -1;
    }
    int64_t length = -1;
    int chunked = 0;
    for (;;) {
        int n = fk_http_line(r, line, sizeof line);
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
        result = fk_http_body(r, length, sink, ctx, err, errlen);
    } else {
        result = 0;
        for (;;) {
            if (fk_http_line(r, line, sizeof line) < 0) {
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
            if (fk_http_body(r, size, sink, ctx, err, errlen) != 0 || fk_http_line(r, line, sizeof line) != 0) {
                result = -1;
                break;
            }
        }
    }
    free(r);
    close(fd);
    return result;
}
