#include "fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
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
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
                return -1;
            }
            *p = '/';
        }
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
        return -1;
    }
    return 0;
}

/* Recursive, thread-safe (nftw would need shared state for the total). */
static int64_t tree_size(int dirfd) {
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
        struct stat st;
        if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            total = -1;
        } else if (S_ISLNK(st.st_mode)) {
            unlinkat(dirfd, e->d_name, 0);
        } else if (S_ISREG(st.st_mode)) {
            total += st.st_size;
        } else if (S_ISDIR(st.st_mode)) {
            int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            int64_t n = sub < 0 ? -1 : tree_size(sub);
            total = n < 0 ? -1 : total + n;
        }
    }
    closedir(d);
    return total;
}

int64_t fk_tree_size_unlinking(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) {
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        return st.st_size;
    }
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return fd < 0 ? -1 : tree_size(fd);
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
