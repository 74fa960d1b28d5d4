#include "fetch.h"

#include "fsutil.h"
#include "hash.h"
#include "http.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    int fd;
    fk_hash sha;
    fk_hash declared; /* MD5, when the task declared one */
    int md5;
    int64_t n;
    char *err;
    size_t errlen;
} copy_sink;

static int to_file(void *ctx, const void *data, size_t len) {
    copy_sink *s = ctx;
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(s->fd, p, left);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            fk_errf(s->err, s->errlen, "cannot write the copy: %s", strerror(errno));
            return -1;
        }
        p += w;
        left -= (size_t)w;
    }
    fk_hash_update(&s->sha, data, len);
    if (s->md5) {
        fk_hash_update(&s->declared, data, len);
    }
    s->n += (int64_t)len;
    return 0;
}

/* Lexically resolves src under root; -1 if it would leave the root. */
static int under_root(const char *root, const char *src, char *out, size_t len) {
    char parts[PATH_MAX];
    snprintf(parts, sizeof parts, "%s", src);
    char *stack[PATH_MAX / 2];
    int depth = 0;
    for (char *save = NULL, *p = strtok_r(parts, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
        if (strcmp(p, ".") == 0) {
            continue;
        }
        if (strcmp(p, "..") == 0) {
            if (depth == 0) {
                return -1;
            }
            depth--;
            continue;
        }
        stack[depth++] = p;
    }
    size_t k = (size_t)snprintf(out, len, "%s", root);
    for (int i = 0; i < depth && k < len; i++) {
        k += (size_t)snprintf(out + k, len - k, "/%s", stack[i]);
    }
    return k < len ? 0 : -1;
}

static int percent_decode(char *s) {
    char *w = s;
    for (char *r = s; *r; r++) {
        if (*r == '%' && r[1] && r[2]) {
            char hex[3] = {r[1], r[2], 0};
            char *end;
            long v = strtol(hex, &end, 16);
            if (*end) {
                return -1;
            }
            *w++ = (char)v;
            r += 2;
        } else {
            *w++ = *r;
        }
    }
    *w = 0;
    return 0;
}

/* The file a store source names, in path; -1 with err (every such failure is permanent). A
 * relative source must stay inside the store root, links followed: a link in the store pointing
 * outside it is refused. */
static int store_path(const char *root, const char *src, char *path, size_t len, char *err, size_t errlen) {
    if (strncmp(src, "file:", 5) == 0) {
        const char *p = src + 5;
        if (strncmp(p, "//", 2) == 0) {
            p += 2;
            const char *slash = strchr(p, '/'); /* skip an authority (file://host/path) */
            p = slash ? slash : "";
        }
        snprintf(path, len, "%s", p);
        if (path[0] != '/' || percent_decode(path) != 0) {
            fk_errf(err, errlen, "'%s' is not an absolute file: URL (file:/path/to/object; a path relative to the "
                "store root is written without file:)", src);
            return -1;
        }
        return 0;
    }
    if (src[0] == '/') {
        snprintf(path, len, "%s", src);
        return 0;
    }
    if (!root) {
        fk_errf(err, errlen, "'%s' is a relative source but the executor has no shared store root (--store DIR)", src);
        return -1;
    }
    if (under_root(root, src, path, len) != 0) {
        fk_errf(err, errlen, "'%s' leaves the shared store root", src);
        return -1;
    }
    char real[PATH_MAX], realroot[PATH_MAX];
    if (realpath(path, real) && realpath(root, realroot)) {
        size_t n = strlen(realroot);
        if (strncmp(real, realroot, n) != 0 || (real[n] != '/' && real[n] != 0)) {
            fk_errf(err, errlen, "'%s' is a link to %s, outside the shared store root", src, real);
            return -1;
        }
    }
    return 0;
}

void fk_store_stamp(const char *root, const fk_input *ref, int64_t *size, int64_t *mtime) {
    *size = *mtime = -1;
    char path[PATH_MAX], why[256];
    if (strncmp(ref->source.s, "http://", 7) == 0 || strncmp(ref->source.s, "https://", 8) == 0
        || store_path(root, ref->source.s, path, sizeof path, why, sizeof why) != 0) {
        return;
    }
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
        *size = st.st_size;
        *mtime = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    }
}

/* Opens a store source that is a file, stamping it; -1 with err (permanent). */
static int open_store_file(const char *root, const char *src, int64_t *ssize, int64_t *smtime, char *err,
                           size_t errlen) {
    char path[PATH_MAX];
    if (store_path(root, src, path, sizeof path, err, errlen) != 0) {
        return -1;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0) {
            close(fd);
        }
        fk_errf(err, errlen, "%s does not exist in the shared store", path);
        return -1;
    }
    *ssize = st.st_size;
    *smtime = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    return fd;
}

static int copy_hashed(copy_sink *sink, const char *root, const char *peer, const char *token, const fk_input *ref,
                       const char *out, fk_copied *got, int *permanent, char *err, size_t errlen);

int fk_copy_verified(const char *root, const char *peer, const char *token, const fk_input *ref, const char *out,
                     fk_copied *got, int *permanent, char *err, size_t errlen) {
    copy_sink s;
    memset(&s, 0, sizeof s);
    int rc = copy_hashed(&s, root, peer, token, ref, out, got, permanent, err, errlen);
    fk_hash_free(&s.sha); /* the hashes a failed copy left unfinished */
    fk_hash_free(&s.declared);
    return rc;
}

static int copy_hashed(copy_sink *s, const char *root, const char *peer, const char *token, const fk_input *ref,
                       const char *out, fk_copied *got, int *permanent, char *err, size_t errlen) {
    memset(got, 0, sizeof *got);
    got->stamp_size = got->stamp_mtime = -1;
    *permanent = 0;
    s->err = err;
    s->errlen = errlen;
    const char *sum = ref->checksum.s;
    fk_hash_init(&s->sha, 0);
    if (ref->checksum.len) {
        s->md5 = strncmp(sum, "md5:", 4) == 0;
        if (!s->md5 && strncmp(sum, "sha256:", 7) != 0) {
            fk_errf(err, errlen, "checksum of %s must be sha256:HEX or md5:HEX, got %s", ref->id.s, sum);
            *permanent = 1;
            return -1;
        }
        if (s->md5) {
            fk_hash_init(&s->declared, 1);
        }
    }
    char from[600];
    if (peer) {
        snprintf(from, sizeof from, "peer %s", peer);
    } else {
        snprintf(from, sizeof from, "the shared store (%s)", ref->source.s);
    }
    s->fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (s->fd < 0) {
        fk_errf(err, errlen, "cannot create %s: %s", out, strerror(errno));
        return -1;
    }
    char recorded[65] = "";
    int rc;
    if (peer || strncmp(ref->source.s, "http://", 7) == 0 || strncmp(ref->source.s, "https://", 8) == 0) {
        char *url;
        if (peer) {
            char *enc = fk_url_encode(ref->id.s);
            size_t n = strlen(peer) + strlen(enc) + 32;
            url = malloc(n);
            if (!url) {
                abort();
            }
            snprintf(url, n, "http://%s/objects?id=%s", peer, enc);
            free(enc);
        } else {
            url = strdup(ref->source.s);
            if (!url) {
                abort();
            }
        }
        rc = fk_http_get(url, peer ? token : NULL, peer ? recorded : NULL, to_file, s, err, errlen);
        free(url);
        if (rc == 404 && !peer) {
            *permanent = 1; /* the store has no such object */
        }
        rc = rc == 0 ? 0 : -1;
        if (rc == 0 && peer && !recorded[0]) {
            fk_errf(err, errlen, "peer %s did not say what it recorded of %s (no " FK_SHA256_HEADER " header)", peer,
                ref->id.s);
            rc = -1;
        }
    } else {
        int in = open_store_file(root, ref->source.s, &got->stamp_size, &got->stamp_mtime, err, errlen);
        rc = in < 0 ? -1 : 0;
        *permanent = in < 0;
        char buf[65536];
        while (rc == 0) {
            ssize_t n = read(in, buf, sizeof buf);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n < 0) {
                fk_errf(err, errlen, "reading %s: %s", ref->source.s, strerror(errno));
                rc = -1;
            } else if (n == 0) {
                break;
            } else {
                rc = to_file(s, buf, (size_t)n);
            }
        }
        if (in >= 0) {
            close(in);
        }
    }
    if (close(s->fd) != 0 && rc == 0) {
        fk_errf(err, errlen, "cannot write the copy: %s", strerror(errno));
        rc = -1;
    }
    if (rc != 0) {
        return -1;
    }
    fk_hash_hex(&s->sha, got->sha256);
    got->size = s->n;
    if (ref->size >= 0 && s->n != ref->size) {
        fk_errf(err, errlen, "got %lld bytes from %s, the task declared %lld", (long long)s->n, from, (long long)ref->size);
        *permanent = !peer;
        return -1;
    }
    if (ref->checksum.len) {
        char declared[65];
        if (s->md5) {
            fk_hash_hex(&s->declared, declared);
        } else {
            snprintf(declared, sizeof declared, "%s", got->sha256);
        }
        const char *want = strchr(sum, ':') + 1;
        if (strcasecmp(declared, want) != 0) {
            fk_errf(err, errlen, "checksum mismatch from %s: %.*s %s, the task declared %s", from, (int)(want - 1 - sum),
                sum, declared, want);
            *permanent = !peer;
            return -1;
        }
    }
    if (peer && strcasecmp(recorded, got->sha256) != 0) {
        fk_errf(err, errlen, "peer %s sent bytes that do not match its own record of %s (sha256 %s, recorded %s)", peer,
            ref->id.s, got->sha256, recorded);
        return -1;
    }
    return 0;
}

/* A store copy with nothing to check but the size: no checksum declared, no record kept (the copy
 * is the task's, not the cache's). The kernel copies it, with no pass over the bytes in user space
 * (hashing every byte cost more CPU than a short task itself: docs/benchmarks.md, "Workflows"). */
static int64_t plain_store_copy(const char *root, const fk_input *ref, const char *out, int *permanent, char *err,
                                size_t errlen) {
    int64_t size, mtime;
    int in = open_store_file(root, ref->source.s, &size, &mtime, err, errlen);
    if (in < 0) {
        *permanent = 1;
        return -1;
    }
    *permanent = 0;
    if (ref->size >= 0 && size != ref->size) {
        close(in);
        fk_errf(err, errlen, "%s holds %lld bytes in the shared store, the task declared %lld", ref->source.s,
            (long long)size, (long long)ref->size);
        *permanent = 1;
        return -1;
    }
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = fd < 0 ? -1 : fk_copy_fd(in, fd, (off_t)size);
    int saved = errno;
    close(in);
    if (fd >= 0 && close(fd) != 0 && rc == 0) {
        rc = -1;
        saved = errno;
    }
    if (rc != 0) {
        fk_errf(err, errlen, "cannot copy %s from the shared store to %s: %s", ref->source.s, out, strerror(saved));
        return -1;
    }
    return size;
}

int64_t fk_store_copy(const char *store_root, const fk_input *ref, const char *out, int *permanent, char *err,
                      size_t errlen) {
    const char *src = ref->source.s;
    if (!ref->checksum.len && strncmp(src, "http://", 7) != 0 && strncmp(src, "https://", 8) != 0) {
        int64_t n = plain_store_copy(store_root, ref, out, permanent, err, errlen);
        if (n < 0) {
            unlink(out);
        }
        return n;
    }
    fk_copied got;
    if (fk_copy_verified(store_root, NULL, NULL, ref, out, &got, permanent, err, errlen) != 0) {
        unlink(out);
        return -1;
    }
    return got.size;
}
