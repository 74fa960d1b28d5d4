#include "fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)st;
    (void)ftw;
    if (type == FTW_DP) {
        rmdir(path);
    } else {
        unlink(path);
    }
    return 0;
}

void fk_rmtree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) {
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        unlink(path);
        return;
    }
    nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

int fk_mkdirs(const char *path) {
    return fk_mkdirs_mode(path, 0755);
}

int fk_mkdirs_mode(const char *path, mode_t mode) {
    /* Mostly there already (a task's outputs go to a few store directories): one lookup, where making
     * each component in turn took the parent's lock for every one of them (four for a store in /tmp) */
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        return 0;
    }
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, mode) != 0 && errno != EEXIST) {
                return -1;
            }
            *p = '/';
        }
    }
    if (mkdir(buf, mode) != 0 && errno != EEXIST) {
        return -1;
    }
    return 0;
}

/* Recursive, thread-safe (nftw would need shared state for the total). */
static int64_t tree_size(int dirfd, const char *rel, char *link, size_t linklen) {
    DIR *d = fdopendir(dirfd);
    if (!d) {
        close(dirfd);
        return -1;
    }
    int64_t total = 0;
    struct dirent *e;
    while (total >= 0 && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
            continue;
        }
        char name[PATH_MAX];
        snprintf(name, sizeof name, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
        struct stat st;
        if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            total = -1;
        } else if (S_ISLNK(st.st_mode)) {
            snprintf(link, linklen, "%s", name);
            total = -2;
        } else if (S_ISREG(st.st_mode)) {
            total += st.st_size;
        } else if (S_ISDIR(st.st_mode)) {
            int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            int64_t n = sub < 0 ? -1 : tree_size(sub, name, link, linklen);
            total = n < 0 ? n : total + n;
        }
    }
    closedir(d);
    return total;
}

int64_t fk_tree_size_plain(const char *path, char *link, size_t linklen) {
    struct stat st;
    if (lstat(path, &st) != 0) {
        return -1;
    }
    if (S_ISLNK(st.st_mode)) {
        snprintf(link, linklen, ".");
        return -2;
    }
    if (!S_ISDIR(st.st_mode)) {
        return st.st_size;
    }
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return fd < 0 ? -1 : tree_size(fd, "", link, linklen);
}

int fk_copy_fd(int in, int out, off_t size) {
#ifdef FICLONE
    if (ioctl(out, FICLONE, in) == 0) {
        return 0;
    }
#endif
    off_t done = 0;
    while (done < size) {
        ssize_t n = copy_file_range(in, NULL, out, NULL, (size_t)(size - done), 0);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break; /* not supported here (or a short file): read and write what is left */
        }
        done += n;
    }
    char buf[65536];
    while (done < size) {
        ssize_t n = pread(in, buf, sizeof buf, done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return n == 0 ? 0 : -1;
        }
        for (ssize_t w = 0; w < n;) {
            ssize_t k = pwrite(out, buf + w, (size_t)(n - w), done + w);
            if (k < 0 && errno == EINTR) {
                continue;
            }
            if (k <= 0) {
                return -1;
            }
            w += k;
        }
        done += n;
    }
    return 0;
}

int fk_copy_to(int in, off_t size, const char *to, mode_t mode, int durable) {
    int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (out < 0) {
        return -1;
    }
    int rc = lseek(in, 0, SEEK_SET) == 0 ? fk_copy_fd(in, out, size) : -1;
    if (rc == 0) {
        rc = fchmod(out, mode); /* the mode asked for, whatever the umask */
    }
    if (rc == 0 && durable) {
        rc = fsync(out);
    }
    int saved = errno;
    if (close(out) != 0 && rc == 0) {
        rc = -1;
        saved = errno;
    }
    if (rc != 0) {
        unlink(to);
        errno = saved;
    }
    return rc;
}

/* A tree's member: a symbolic link at from is refused, not followed. */
static int clone_file(const char *from, const char *to) {
    int in = open(from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (in < 0) {
        return -1;
    }
    struct stat st;
    int rc = fstat(in, &st) == 0 ? fk_copy_to(in, st.st_size, to, 0644, 0) : -1;
    int saved = errno;
    close(in);
    errno = saved;
    return rc;
}

int fk_clone(const char *from, const char *to) {
    struct stat st;
    if (lstat(from, &st) != 0) {
        return -1;
    }
    if (S_ISREG(st.st_mode)) {
        return clone_file(from, to);
    }
    if (!S_ISDIR(st.st_mode)) {
        errno = EINVAL; /* links and devices have no place in a data object */
        return -1;
    }
    if (mkdir(to, 0755) != 0 && errno != EEXIST) {
        return -1;
    }
    DIR *d = opendir(from);
    if (!d) {
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
            continue;
        }
        char a[PATH_MAX], b[PATH_MAX];
        if (snprintf(a, sizeof a, "%s/%s", from, e->d_name) >= (int)sizeof a
            || snprintf(b, sizeof b, "%s/%s", to, e->d_name) >= (int)sizeof b) {
            errno = ENAMETOOLONG;
            rc = -1;
        } else {
            rc = fk_clone(a, b);
        }
    }
    closedir(d);
    return rc;
}

int fk_move(const char *from, const char *to) {
    if (rename(from, to) == 0) {
        return 0;
    }
    if (errno != EXDEV) {
        return -1;
    }
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        return -1;
    }
    struct stat st;
    int out = fstat(in, &st) == 0 ? open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
    if (out < 0) {
        close(in);
        return -1;
    }
    off_t off = 0;
    int ok = 1;
    while (ok && off < st.st_size) {
        ssize_t n = sendfile(out, in, &off, (size_t)(st.st_size - off));
        ok = n > 0 || (n < 0 && errno == EINTR);
    }
    close(in);
    if (close(out) != 0 || !ok) {
        unlink(to);
        return -1;
    }
    return unlink(from);
}

/* to a socket with send(MSG_NOSIGNAL): a peer that has gone is an error, not a SIGPIPE */
static int put_all(int fd, const void *p, size_t n, int socket) {
    const char *c = p;
    while (n > 0) {
        ssize_t w = socket ? send(fd, c, n, MSG_NOSIGNAL) : write(fd, c, n);
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

int fk_write_all(int fd, const void *p, size_t n) {
    return put_all(fd, p, n, 0);
}

int fk_send_all(int fd, const void *p, size_t n) {
    return put_all(fd, p, n, 1);
}
