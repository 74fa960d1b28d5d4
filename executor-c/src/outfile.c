#include "outfile.h"

#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int openat2_beneath(int dirfd, const char *path, int flags, unsigned long long resolve) {
#ifdef SYS_openat2
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (unsigned long long)(flags | O_CLOEXEC);
    how.resolve = resolve | RESOLVE_NO_MAGICLINKS;
    return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
#else
    (void)dirfd, (void)path, (void)flags, (void)resolve;
    errno = ENOSYS;
    return -1;
#endif
}

static void refused(const char *path, const char *id, char *err, size_t errlen) {
    snprintf(err, errlen, "declared output %s (id %s) leads out of the task's sandbox through a symbolic link: "
             "refused (docs/data-diffusion.md, \"What may leave a sandbox\")", path, id);
}

/* Where openat2 is missing (Linux before 5.6, or filtered): the same rule by real paths. A process the
 * task left behind could race it, as it could do anything else the user may; openat2 leaves no gap. */
static int open_by_real_path(const char *sandbox, const char *path, const char *id, fk_outfile *f, char *err,
                             size_t errlen) {
    char base[PATH_MAX], lexical[PATH_MAX + 256], real[PATH_MAX];
    if (!realpath(sandbox, base) || snprintf(lexical, sizeof lexical, "%s/%s", base, path) >= (int)sizeof lexical) {
        return 1;
    }
    if (!realpath(lexical, real)) {
        return 1;
    }
    size_t n = strlen(base);
    if (strncmp(real, base, n) != 0 || real[n] != '/') {
        refused(path, id, err, errlen);
        return -1;
    }
    f->fd = open(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (f->fd < 0 || fstat(f->fd, &f->st) != 0 || !S_ISREG(f->st.st_mode)) {
        return 1;
    }
    if (strcmp(real, lexical) == 0 && f->st.st_nlink == 1) {
        char *slash = strrchr(real, '/');
        *slash = 0;
        f->dirfd = open(real, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        snprintf(f->name, sizeof f->name, "%s", slash + 1);
        f->movable = f->dirfd >= 0;
    }
    return 0;
}

int fk_outfile_open(const char *sandbox, const char *workdir, const char *path, const char *id, fk_outfile *f,
                    char *err, size_t errlen) {
    memset(f, 0, sizeof *f);
    f->fd = f->dirfd = -1;
    int rc;
    if (path[0] == '/' || strcmp(workdir, sandbox) != 0) {
        /* the user's own file: read where it is (links followed), never moved */
        char full[PATH_MAX + 256];
        snprintf(full, sizeof full, "%s%s%s", path[0] == '/' ? "" : workdir, path[0] == '/' ? "" : "/", path);
        f->fd = open(full, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        rc = f->fd >= 0 && fstat(f->fd, &f->st) == 0 && S_ISREG(f->st.st_mode) ? 0 : 1;
    } else {
        int sfd = open(sandbox, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (sfd < 0) {
            return 1;
        }
        f->fd = openat2_beneath(sfd, path, O_RDONLY | O_NONBLOCK, RESOLVE_BENEATH);
        if (f->fd < 0 && (errno == ENOSYS || errno == EPERM)) {
            close(sfd);
            rc = open_by_real_path(sandbox, path, id, f, err, errlen);
            if (rc != 0) {
                fk_outfile_close(f);
            }
            return rc;
        }
        struct stat probe;
        if (f->fd < 0) {
            /* out of the sandbox: refused, unless it leads to nothing (an output not written, as the Java
             * executor finds it); a loop of links is no file either */
            rc = errno == EXDEV && fstatat(sfd, path, &probe, 0) == 0 ? -1 : 1;
            if (rc < 0) {
                refused(path, id, err, errlen);
            }
        } else if (fstat(f->fd, &f->st) != 0 || !S_ISREG(f->st.st_mode)) {
            rc = 1;
        } else {
            rc = 0;
            if (f->st.st_nlink == 1) {
                /* movable only when reached without any link: its directory opened the same way */
                const char *slash = strrchr(path, '/');
                char dir[PATH_MAX];
                snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
                snprintf(f->name, sizeof f->name, "%s", slash ? slash + 1 : path);
                f->dirfd = openat2_beneath(sfd, dir, O_PATH | O_DIRECTORY, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
                struct stat ls;
                f->movable = f->dirfd >= 0 && fstatat(f->dirfd, f->name, &ls, AT_SYMLINK_NOFOLLOW) == 0
                             && S_ISREG(ls.st_mode) && ls.st_ino == f->st.st_ino && ls.st_dev == f->st.st_dev;
                if (!f->movable && f->dirfd >= 0) {
                    close(f->dirfd);
                    f->dirfd = -1;
                }
            }
        }
        close(sfd);
    }
    if (rc != 0) {
        fk_outfile_close(f);
    }
    return rc;
}

void fk_outfile_close(fk_outfile *f) {
    if (f->fd >= 0) {
        close(f->fd);
    }
    if (f->dirfd >= 0) {
        close(f->dirfd);
    }
    f->fd = f->dirfd = -1;
    f->movable = 0;
}

int fk_outfile_take(fk_outfile *f, const char *to, int durable) {
    if (f->movable && renameat(f->dirfd, f->name, AT_FDCWD, to) == 0) {
        struct stat moved;
        /* what was renamed is what was checked: a file swapped in meanwhile (a link) is put back */
        if (lstat(to, &moved) != 0 || moved.st_ino != f->st.st_ino || moved.st_dev != f->st.st_dev) {
            renameat(AT_FDCWD, to, f->dirfd, f->name);
            errno = ESTALE;
            return -1;
        }
        if (durable && fsync(f->fd) != 0) {
            int saved = errno;
            renameat(AT_FDCWD, to, f->dirfd, f->name);
            errno = saved;
            return -1;
        }
        return 0;
    }
    /* not movable, or on another file system: a copy with the file's permission bits */
    return fk_copy_to(f->fd, f->st.st_size, to, f->st.st_mode & 0777, durable);
}

int fk_outfile_put_back(fk_outfile *f, const char *from) {
    if (!f->movable) {
        return unlink(from); /* it was a copy: the task's file is where it was */
    }
    return renameat(AT_FDCWD, from, f->dirfd, f->name);
}
