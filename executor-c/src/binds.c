#include "binds.h"

#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The new mount API by number: older C libraries have no wrappers for it. */
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#endif

/* struct mount_attr of <linux/mount.h>, which cannot be included beside <sys/mount.h> */
typedef struct {
    uint64_t attr_set, attr_clr, propagation, userns_fd;
} fk_mount_attr;

#if defined(SYS_open_tree) && defined(SYS_move_mount) && defined(SYS_mount_setattr)
#define FK_HAVE_MOUNT_API 1
#endif

/* One empty file beside the sandboxes (made by the probe), linked at each mount point: a link makes
 * no inode, and making and freeing an inode for every read-only input was the executor's largest
 * cost per input (ext4 searching for an inode not recently freed). "" until the probe made it. */
static char mount_point[4096];

int fk_bind_prepare(int fd, const char *target, fk_bind *b) {
    if (!mount_point[0] || link(mount_point, target) != 0) { /* a link may fail (EMLINK): a file of its own */
        int t = open(target, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
        if (t < 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        close(t);
    }
    b->fd = fd;
    b->target = strdup(target);
    if (!b->target) {
        abort();
    }
    return 0;
}

void fk_bind_release(fk_bind *b) {
    if (b->fd >= 0) {
        close(b->fd);
    }
    free(b->target);
    b->fd = -1;
    b->target = NULL;
}

void fk_binds_close(int *trees, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (trees[i] >= 0) {
            close(trees[i]);
            trees[i] = -1;
        }
    }
}

int fk_binds_clone(const fk_bind *b, size_t n, int *trees, size_t *failed) {
    for (size_t i = 0; i < n; i++) {
        trees[i] = -1;
    }
#ifdef FK_HAVE_MOUNT_API
    for (size_t i = 0; i < n; i++) {
        int t = (int)syscall(SYS_open_tree, b[i].fd, "", OPEN_TREE_CLONE | O_CLOEXEC | AT_EMPTY_PATH);
        /* read-only on the clone alone: the flags the file system is mounted with stay as they are */
        fk_mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
        if (t < 0 || syscall(SYS_mount_setattr, t, "", AT_EMPTY_PATH, &ro, sizeof ro) != 0) {
            int e = errno;
            if (t >= 0) {
                close(t);
            }
            fk_binds_close(trees, i);
            *failed = i;
            errno = e;
            return -1;
        }
        trees[i] = t;
    }
    return 0;
#else
    (void)b;
    *failed = 0;
    errno = n ? ENOSYS : 0;
    return n ? -1 : 0;
#endif
}

int fk_binds_enter(const fk_bind *b, const int *trees, size_t n, size_t *failed) {
    *failed = 0;
#ifdef FK_HAVE_MOUNT_API
    if (unshare(CLONE_NEWNS) != 0) {
        return errno;
    }
    /* without this, mounts made here would propagate back to the executor's namespace where the
     * sandbox's file system is a shared mount (systemd makes / shared) */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        return errno;
    }
    for (size_t i = 0; i < n; i++) {
        if (syscall(SYS_move_mount, trees[i], "", AT_FDCWD, b[i].target, MOVE_MOUNT_F_EMPTY_PATH) != 0) {
            *failed = i;
            return errno;
        }
    }
    return 0;
#else
    (void)b;
    (void)trees;
    return n ? ENOSYS : 0;
#endif
}

static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
static int probed;
static const char *probe_dir;
static int available;

/* The child of the probe: gives the scratch file in place, then checks what a task would see. */
static int probe_child(const fk_bind *b, const int *tree) {
    size_t failed;
    if (fk_binds_enter(b, tree, 1, &failed) != 0) {
        return 1;
    }
    char c = 0;
    int r = open(b->target, O_RDONLY | O_CLOEXEC);
    if (r < 0 || read(r, &c, 1) != 1 || c != 'x') {
        return 2;
    }
    int w = open(b->target, O_WRONLY | O_CLOEXEC);
    return w < 0 && errno == EROFS ? 0 : 3;
}

static void probe(void) {
    char file[4096], target[4200];
    snprintf(file, sizeof file, "%s/.binds-probe-%d", probe_dir, (int)getpid());
    snprintf(target, sizeof target, "%s.target", file);
    const char *why = NULL;
    int err = 0, status = 0;
    int fd = open(file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, "x", 1) != 1) {
        why = "cannot write a scratch file";
        err = errno;
        if (fd >= 0) {
            close(fd);
        }
    } else {
        fk_bind b;
        int tree;
        size_t failed;
        if (fk_bind_prepare(fd, target, &b) != 0) {
            why = "cannot make a mount point";
            err = errno;
        } else {
            if (fk_binds_clone(&b, 1, &tree, &failed) != 0) {
                why = "cannot clone a mount (it needs Linux 5.12 and CAP_SYS_ADMIN)";
                err = errno;
            } else {
                pid_t pid = fork();
                if (pid == 0) {
                    _exit(probe_child(&b, &tree));
                }
                err = errno;
                while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
                }
                fk_binds_close(&tree, 1);
                why = pid < 0 ? "cannot fork" : status != 0 ? "a task could not be given a read-only mount" : NULL;
            }
            fk_bind_release(&b);
        }
    }
    unlink(target);
    unlink(file);
    available = why == NULL;
    if (available) {
        snprintf(mount_point, sizeof mount_point, "%s/.read-only-mount-point", probe_dir);
        unlink(mount_point);
        int m = open(mount_point, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
        if (m >= 0) {
            close(m);
        } else {
            mount_point[0] = 0; /* each mount point a file of its own */
        }
    }
    if (why) {
        fk_info("read-only inputs are copied: %s (%s)", why,
                status != 0 ? "the probe's namespace or mount failed" : strerror(err));
    } else {
        fk_debug("read-only inputs are given in place (read-only bind mounts)");
    }
}

int fk_binds_available(const char *dir) {
    pthread_mutex_lock(&probe_lock); /* the first caller probes; the others wait for its answer */
    if (!probed) {
        probe_dir = dir;
        probe();
        probed = 1;
    }
    int yes = available;
    pthread_mutex_unlock(&probe_lock);
    return yes;
}
