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
/* Where a source is: a file: URL's path, an absolute path, or a path under root (*beneath set: what is
 * opened there must be checked to stay under root, links included). 0, or -1 with err. */
static int store_path(const char *root, const char *src, char *path, size_t len, int *beneath, char *err,
                      size_t errlen) {
    *beneath = 0;
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
    *beneath = 1;
    return 0;
}

/* Whether real (a resolved path) is root's real path or under it. */
static int real_under(const char *root, const char *real) {
    char realroot[PATH_MAX];
    if (!realpath(root, realroot)) {
        return 0;
    }
    size_t n = strlen(realroot);
    return strncmp(real, realroot, n) == 0 && (real[n] == '/' || real[n] == 0 || n == 1);
}

/* Opens path (a store source under root: checked, when beneath, to lead nowhere else through a link)
 * for reading, only if it is a regular file. The check is made on what was opened, not on the name
 * before opening it, so that a link swapped in between cannot lead the executor elsewhere; and the
 * name is first opened O_PATH, so that nothing that is not a regular file (a FIFO, a device) is ever
 * opened for reading. The descriptor, or -1 with err. */
static int open_checked(const char *root, const char *src, const char *path, int beneath, struct stat *st,
                        char *err, size_t errlen) {
    int at = open(path, O_PATH | O_CLOEXEC);
    if (at < 0 || fstat(at, st) != 0 || !S_ISREG(st->st_mode)) {
        if (at >= 0) {
            close(at);
        }
        fk_errf(err, errlen, "%s does not exist in the shared store", path);
        return -1;
    }
    char self[64], real[PATH_MAX];
    snprintf(self, sizeof self, "/proc/self/fd/%d", at);
    if (beneath) {
        ssize_t n = readlink(self, real, sizeof real - 1);
        if (n < 0 && !realpath(path, real)) { /* no /proc: the name's own resolution */
            real[0] = 0;
        } else if (n >= 0) {
            real[n] = 0;
        }
        if (!real_under(root, real)) {
            close(at);
            fk_errf(err, errlen, "'%s' is a link to %s, outside the shared store root", src, real[0] ? real : "?");
            return -1;
        }
    }
    int fd = open(self, O_RDONLY | O_CLOEXEC); /* the very file checked above */
    close(at);
    if (fd < 0) {
        fk_errf(err, errlen, "cannot read %s in the shared store: %s", path, strerror(errno));
    }
    return fd;
}

void fk_store_stamp(const char *root, const fk_input *ref, int64_t *size, int64_t *mtime) {
    *size = *mtime = -1;
    char path[PATH_MAX], real[PATH_MAX], why[256];
    int beneath;
    if (strncmp(ref->source.s, "http://", 7) == 0 || strncmp(ref->source.s, "https://", 8) == 0
        || store_path(root, ref->source.s, path, sizeof path, &beneath, why, sizeof why) != 0
        || (beneath && (!realpath(path, real) || !real_under(root, real)))) {
        return; /* not a file of the store: what reads it says why */
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
    int beneath;
    if (store_path(root, src, path, sizeof path, &beneath, err, errlen) != 0) {
        return -1;
    }
    struct stat st;
    int fd = open_checked(root, src, path, beneath, &st, err, errlen);
    if (fd < 0) {
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

/* Starts a verified copy of ref into the new file out: the hashes it needs, the file. 0, or -1
 * with err (*permanent when the declared checksum cannot be checked by anyone). */
static int sink_open(copy_sink *s, const fk_input *ref, const char *out, int *permanent, char *err, size_t errlen) {
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
    s->fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (s->fd < 0) {
        fk_errf(err, errlen, "cannot create %s: %s", out, strerror(errno));
        return -1;
    }
    return 0;
}

/* Ends a copy whose bytes all went through to_file: the file closed, its SHA-256 in got, checked
 * against the size and checksum the task declares and, from a peer, against recorded (the peer's
 * own record). 0, or -1 with err (*permanent when the store itself holds something else). */
static int sink_verify(copy_sink *s, const fk_input *ref, const char *peer, const char *recorded, fk_copied *got,
                       int *permanent, char *err, size_t errlen) {
    const char *sum = ref->checksum.s;
    char from[600];
    if (peer) {
        snprintf(from, sizeof from, "peer %s", peer);
    } else {
        snprintf(from, sizeof from, "the shared store (%s)", ref->source.s);
    }
    if (close(s->fd) != 0) {
        fk_errf(err, errlen, "cannot write the copy: %s", strerror(errno));
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

static int copy_hashed(copy_sink *s, const char *root, const char *peer, const char *token, const fk_input *ref,
                       const char *out, fk_copied *got, int *permanent, char *err, size_t errlen) {
    memset(got, 0, sizeof *got);
    got->stamp_size = got->stamp_mtime = -1;
    if (sink_open(s, ref, out, permanent, err, errlen) != 0) {
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
    if (rc != 0) {
        close(s->fd);
        return -1;
    }
    return sink_verify(s, ref, peer, recorded, got, permanent, err, errlen);
}

int fk_store_open(const char *store_root, const fk_input *ref, int64_t *size, int *permanent, char *err,
                  size_t errlen) {
    int64_t mtime;
    int in = open_store_file(store_root, ref->source.s, size, &mtime, err, errlen);
    *permanent = 1;
    if (in < 0) {
        return -1;
    }
    if (ref->size >= 0 && *size != ref->size) {
        close(in);
        fk_errf(err, errlen, "%s holds %lld bytes in the shared store, the task declared %lld", ref->source.s,
                (long long)*size, (long long)ref->size);
        return -1;
    }
    *permanent = 0;
    return in;
}

int fk_store_plain(const fk_input *ref) {
    const char *src = ref->source.s;
    return !ref->checksum.len && strncmp(src, "http://", 7) != 0 && strncmp(src, "https://", 8) != 0;
}

/* A store copy with nothing to check but the size: no checksum declared, no record kept (the copy
 * is the task's, not the cache's). The kernel copies it, with no pass over the bytes in user space
 * (hashing every byte cost more CPU than a short task itself: docs/benchmarks.md, "Workflows"). */
static int64_t plain_store_copy(const char *root, const fk_input *ref, const char *out, int *permanent, char *err,
                                size_t errlen) {
    int64_t size;
    int in = fk_store_open(root, ref, &size, permanent, err, errlen);
    if (in < 0) {
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
    if (fk_store_plain(ref)) {
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

/* ---- a peer's batch answer: a tar stream, read as it arrives ---- */

#define TAR_BLOCK 512

typedef struct {
    const char *peer;
    const fk_input *const *refs;
    size_t n;
    const char *prefix;
    fk_arrival_fn on_arrival;
    void *ctx;
    unsigned char header[TAR_BLOCK];
    size_t have;         /* bytes of the current header */
    int64_t left;        /* bytes of the current entry's data still to come */
    int64_t pad;         /* bytes of padding after it */
    int in_data;
    int writing;         /* the entry is being copied (else skipped) */
    int ended;           /* the two zero blocks came */
    size_t index;
    char recorded[65];
    char path[PATH_MAX];
    copy_sink sink;
    char why[600];
    int arrived;
    unsigned char *seen; /* per index: an entry came (a second one for it is dropped) */
} batch_reader;

/* The octal number of a tar header field; -1 when it is not one. */
static int64_t tar_octal(const unsigned char *p, size_t len) {
    int64_t v = 0;
    size_t i = 0;
    while (i < len && p[i] == ' ') {
        i++;
    }
    size_t digits = 0;
    for (; i < len && p[i] >= '0' && p[i] <= '7'; i++, digits++) {
        v = v * 8 + (p[i] - '0');
    }
    return digits ? v : -1;
}

/* Starts the entry of a complete header: copied when its name is INDEX.SHA256 of something asked. */
static void tar_entry(batch_reader *b) {
    unsigned sum = 0;
    for (size_t i = 0; i < TAR_BLOCK; i++) {
        sum += i >= 148 && i < 156 ? ' ' : b->header[i];
    }
    int64_t size = tar_octal(b->header + 124, 12);
    int64_t check = tar_octal(b->header + 148, 8);
    char name[101];
    memcpy(name, b->header, 100);
    name[100] = 0;
    b->left = size < 0 ? 0 : size;
    b->pad = (TAR_BLOCK - b->left % TAR_BLOCK) % TAR_BLOCK;
    b->in_data = 1;
    b->writing = 0;
    char *dot = strchr(name, '.');
    char *end = NULL;
    unsigned long long index = dot ? strtoull(name, &end, 10) : 0;
    int type = b->header[156];
    if (size < 0 || check != (int64_t)sum || (type != '0' && type != 0) || !dot || end != dot
        || index >= b->n || b->seen[index] || strlen(dot + 1) != 64
        || (b->refs[index]->size >= 0 && size != b->refs[index]->size)) {
        fk_warn("peer %s sent a tar entry '%.100s' that answers nothing asked, or not as declared: dropped", b->peer,
                name);
        return;
    }
    b->index = (size_t)index;
    b->seen[index] = 1;
    snprintf(b->recorded, sizeof b->recorded, "%s", dot + 1);
    snprintf(b->path, sizeof b->path, "%s%zu", b->prefix, b->index);
    memset(&b->sink, 0, sizeof b->sink);
    int permanent;
    if (sink_open(&b->sink, b->refs[b->index], b->path, &permanent, b->why, sizeof b->why) != 0) {
        fk_hash_free(&b->sink.sha);
        fk_hash_free(&b->sink.declared);
        fk_warn("cannot take %s from peer %s's batch: %s", b->refs[b->index]->id.s, b->peer, b->why);
        return;
    }
    b->writing = 1;
}

/* The entry's data all came: verified, handed over, or dropped. */
static void tar_entry_end(batch_reader *b) {
    if (!b->writing) {
        return;
    }
    b->writing = 0;
    fk_copied got;
    memset(&got, 0, sizeof got);
    got.stamp_size = got.stamp_mtime = -1;
    int permanent;
    const fk_input *ref = b->refs[b->index];
    if (sink_verify(&b->sink, ref, b->peer, b->recorded, &got, &permanent, b->why, sizeof b->why) != 0) {
        fk_hash_free(&b->sink.sha);
        fk_hash_free(&b->sink.declared);
        unlink(b->path);
        fk_warn("refused %s from peer %s's batch: %s", ref->id.s, b->peer, b->why);
        return;
    }
    fk_hash_free(&b->sink.declared);
    b->arrived++;
    b->on_arrival(b->ctx, b->index, b->path, &got);
}

static int tar_feed(void *ctx, const void *data, size_t len) {
    batch_reader *b = ctx;
    const unsigned char *p = data;
    while (len > 0 && !b->ended) {
        if (b->in_data && b->left > 0) {
            size_t take = (size_t)(b->left < (int64_t)len ? b->left : (int64_t)len);
            if (b->writing && to_file(&b->sink, p, take) != 0) {
                fk_warn("cannot take %s from peer %s's batch: %s", b->refs[b->index]->id.s, b->peer, b->why);
                close(b->sink.fd);
                fk_hash_free(&b->sink.sha);
                fk_hash_free(&b->sink.declared);
                unlink(b->path);
                b->writing = 0;
            }
            b->left -= (int64_t)take;
            p += take;
            len -= take;
            if (b->left == 0) {
                tar_entry_end(b);
            }
        } else if (b->in_data && b->pad > 0) {
            size_t take = (size_t)(b->pad < (int64_t)len ? b->pad : (int64_t)len);
            b->pad -= (int64_t)take;
            p += take;
            len -= take;
        } else if (b->in_data) {
            b->in_data = 0;
            b->have = 0;
        } else {
            size_t take = TAR_BLOCK - b->have < len ? TAR_BLOCK - b->have : len;
            memcpy(b->header + b->have, p, take);
            b->have += take;
            p += take;
            len -= take;
            if (b->have == TAR_BLOCK) {
                int zero = 1;
                for (size_t i = 0; i < TAR_BLOCK && zero; i++) {
                    zero = b->header[i] == 0;
                }
                if (zero) {
                    b->ended = 1;
                } else {
                    tar_entry(b);
                    if (b->left == 0) {
                        tar_entry_end(b);
                    }
                }
                b->have = 0;
            }
        }
    }
    return 0;
}

int fk_batch_fetch(const char *peer, const char *token, const fk_input *const *refs, size_t n, const char *tmp_prefix,
                   fk_arrival_fn on_arrival, void *ctx, char *err, size_t errlen) {
    /* the body is a form, id=ID&id=ID..., each id percent-encoded: no id can be read as two */
    size_t bodylen = 0;
    char **enc = calloc(n ? n : 1, sizeof *enc);
    if (!enc) {
        abort();
    }
    for (size_t i = 0; i < n; i++) {
        enc[i] = fk_url_encode(refs[i]->id.s);
        bodylen += strlen(enc[i]) + 4;
    }
    char *body = malloc(bodylen + 1);
    batch_reader *b = calloc(1, sizeof *b);
    unsigned char *seen = calloc(n ? n : 1, 1);
    if (!body || !b || !seen) {
        abort();
    }
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        at += (size_t)sprintf(body + at, "%sid=%s", i ? "&" : "", enc[i]);
        free(enc[i]);
    }
    free(enc);
    b->peer = peer;
    b->refs = refs;
    b->n = n;
    b->prefix = tmp_prefix;
    b->on_arrival = on_arrival;
    b->ctx = ctx;
    b->seen = seen;
    char url[600];
    snprintf(url, sizeof url, "http://%s/objects", peer);
    int rc = fk_http_request("POST", url, token, body, at, "application/x-www-form-urlencoded", NULL, tar_feed, b, err,
                             errlen);
    if (b->writing) { /* cut off inside an entry */
        close(b->sink.fd);
        fk_hash_free(&b->sink.sha);
        fk_hash_free(&b->sink.declared);
        unlink(b->path);
    }
    int arrived = b->arrived;
    free(body);
    free(seen);
    free(b);
    return rc == 0 ? arrived : -1;
}
