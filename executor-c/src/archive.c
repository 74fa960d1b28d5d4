#include "archive.h"

#include "names.h"

#include "fsutil.h"
#include "hash.h"
#include "log.h"
#include "peer.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 512
/* ustar's size field holds 11 octal digits */
#define MAX_ENTRY ((int64_t)077777777777LL)

struct fk_archive {
    pthread_mutex_t lock;
    char *root;
    char prefix[160];
    int64_t threshold;
    int seq;
    int fd;            /* -1: none open */
    char current[256]; /* relative to the root */
    int64_t pos;
};

fk_archive *fk_archive_new(const char *root, const char *prefix, int64_t threshold) {
    fk_archive *a = calloc(1, sizeof *a);
    if (!a || !(a->root = strdup(root))) {
        abort();
    }
    pthread_mutex_init(&a->lock, NULL);
    /* the executor's id, in characters every file system takes, and what makes it this run's */
    size_t k = 0;
    for (const char *p = prefix; *p && k + 1 < 100; p++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-'
                 || c == '_';
        a->prefix[k++] = ok ? c : '_';
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    snprintf(a->prefix + k, sizeof a->prefix - k, "-%d-%lld", (int)getpid(),
             (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000);
    a->threshold = threshold;
    a->fd = -1;
    return a;
}

/* A header block of typeflag type (lock held by the caller's archive). */
static void header(unsigned char *h, const char *name, int64_t size, char type) {
    fk_tar_header(h, name, size);
    h[156] = (unsigned char)type;
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (size_t i = 0; i < BLOCK; i++) {
        sum += h[i];
    }
    snprintf((char *)h + 148, 8, "%06o", sum);
}

static int pad(int fd, int64_t size) {
    static const unsigned char zeros[BLOCK];
    int64_t n = (BLOCK - size % BLOCK) % BLOCK;
    return n == 0 ? 0 : fk_write_all(fd, zeros, (size_t)n);
}

/* The headers of entry id: a PAX extended header with its path when it does not fit ustar's name field. */
static int headers(fk_archive *a, const char *id, int64_t size) {
    unsigned char h[BLOCK];
    size_t idlen = strlen(id);
    if (idlen > 99) {
        /* "LEN path=ID\n", where LEN counts the whole record, its own digits included */
        size_t body = strlen(" path=") + idlen + 1;
        size_t len = body + 1;
        while (len != body + (size_t)snprintf(NULL, 0, "%zu", len)) {
            len = body + (size_t)snprintf(NULL, 0, "%zu", len);
        }
        char *rec = malloc(len + 1);
        if (!rec) {
            abort();
        }
        snprintf(rec, len + 1, "%zu path=%s\n", len, id);
        header(h, "PaxHeader", (int64_t)len, 'x');
        int rc = fk_write_all(a->fd, h, BLOCK) || fk_write_all(a->fd, rec, len) || pad(a->fd, (int64_t)len);
        free(rec);
        if (rc) {
            return -1;
        }
        a->pos += BLOCK + (int64_t)((len + BLOCK - 1) / BLOCK * BLOCK);
    }
    char name[100];
    snprintf(name, sizeof name, "%.99s", id);
    header(h, name, size, '0');
    if (fk_write_all(a->fd, h, BLOCK)) {
        return -1;
    }
    a->pos += BLOCK;
    return 0;
}

static void finish(fk_archive *a) {
    static const unsigned char end[2 * BLOCK];
    if (fk_write_all(a->fd, end, sizeof end) != 0 || fdatasync(a->fd) != 0) {
        fk_warn("cannot finish the output archive %s: %s", a->current, strerror(errno));
    }
    close(a->fd);
    a->fd = -1;
}

static int begin(fk_archive *a, char *err, size_t errlen) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/archives", a->root);
    if (fk_mkdirs(dir) != 0) {
        snprintf(err, errlen, "cannot make %s: %s", dir, strerror(errno));
        return -1;
    }
    snprintf(a->current, sizeof a->current, "archives/%s-%d.tar", a->prefix, ++a->seq);
    char path[4096 + 256];
    snprintf(path, sizeof path, "%s/%s", a->root, a->current);
    a->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (a->fd < 0) {
        snprintf(err, errlen, "cannot create the output archive %s: %s", path, strerror(errno));
        return -1;
    }
    a->pos = 0;
    return 0;
}

int fk_archive_append(fk_archive *a, const char *id, int fd, fk_archived *out, char *err, size_t errlen) {
    char why[160];
    if (fk_id_check(id, strlen(id), why, sizeof why) != 0) {
        snprintf(err, errlen, "output id '%s' cannot name an archive member: %s", id, why);
        return -1;
    }
    int in = dup(fd);
    struct stat st;
    if (in < 0 || fstat(in, &st) != 0 || lseek(in, 0, SEEK_SET) != 0) {
        snprintf(err, errlen, "cannot read output %s: %s", id, strerror(errno));
        if (in >= 0) {
            close(in);
        }
        return -1;
    }
    if (st.st_size > MAX_ENTRY) {
        close(in);
        snprintf(err, errlen, "output %s (%lld bytes) is too large for an archive entry: declare it without "
                 "\"archive\"", id, (long long)st.st_size);
        return -1;
    }
    pthread_mutex_lock(&a->lock);
    if (a->fd < 0 && begin(a, err, errlen) != 0) {
        pthread_mutex_unlock(&a->lock);
        close(in);
        return -1;
    }
    fk_hash h;
    fk_hash_init(&h, 0);
    int rc = headers(a, id, st.st_size);
    int64_t offset = a->pos;
    char buf[65536];
    int64_t left = st.st_size;
    while (rc == 0 && left > 0) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0 || fk_write_all(a->fd, buf, (size_t)n) != 0) {
            rc = -1;
            break;
        }
        fk_hash_update(&h, buf, (size_t)n);
        left -= n;
    }
    if (rc == 0 && (pad(a->fd, st.st_size) != 0 || fdatasync(a->fd) != 0)) {
        rc = -1;
    }
    if (rc == 0) {
        a->pos += (st.st_size + BLOCK - 1) / BLOCK * BLOCK;
        snprintf(out->archive, sizeof out->archive, "%s", a->current);
        out->offset = offset;
        out->size = st.st_size;
        fk_hash_hex(&h, out->sha256);
        if (a->pos >= a->threshold) {
            finish(a);
        }
    } else {
        /* an entry half written would be read by the next: this archive ends here */
        fk_hash_free(&h);
        snprintf(err, errlen, "cannot append output %s to the archive %s: %s", id, a->current,
                 errno ? strerror(errno) : "the output changed while it was read");
        close(a->fd);
        a->fd = -1;
    }
    pthread_mutex_unlock(&a->lock);
    close(in);
    return rc;
}

void fk_archive_close(fk_archive *a) {
    if (!a) {
        return;
    }
    pthread_mutex_lock(&a->lock);
    if (a->fd >= 0) {
        finish(a);
    }
    pthread_mutex_unlock(&a->lock);
    pthread_mutex_destroy(&a->lock);
    free(a->root);
    free(a);
}
