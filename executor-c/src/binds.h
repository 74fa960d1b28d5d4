/* Read-only inputs given in place (the READ_ONLY extension, docs/data-diffusion.md "Read-only inputs").
 *
 * A task that only reads an input gets, in place of a copy, a read-only bind mount of the cached or
 * stored file at the input's name in its sandbox, made in a mount namespace of the task's own: a
 * write through it fails with EROFS and its removal with EBUSY, for root too, and the mount ends
 * with the task. The executor's own view never changes: there the input's name is an empty file
 * (the mount point), removed with the sandbox.
 *
 * The file is opened (and checked) by the executor before the task starts; the mount is cloned from
 * that open file (open_tree), never looked up again by name, so that a link swapped into the store
 * meanwhile cannot redirect it. It needs Linux 5.12 (open_tree, move_mount, mount_setattr) and the
 * right to make a mount namespace (root, or CAP_SYS_ADMIN); fk_binds_available() finds out once, and
 * where it says no, every input is copied as before. */
#ifndef FK_BINDS_H
#define FK_BINDS_H

#include <stddef.h>

/* At most this many inputs of one task are given in place (each holds two descriptors while the task
 * starts); the rest are copied. */
#define FK_MAX_BINDS 256

/* One input to give in place: the open file (O_RDONLY, owned) and the path of its mount point in the
 * sandbox (owned), an empty file fk_bind_prepare made. */
typedef struct {
    int fd;
    char *target;
} fk_bind;

/* Whether this executor can give inputs in place: tried once (a child process makes a namespace and
 * a read-only mount of a scratch file in dir, and checks that a write through it fails), then
 * remembered. */
int fk_binds_available(const char *dir);

/* Takes fd (an open regular file: the input) for target, a path in the sandbox: creates target as
 * an empty file (it must not exist). 0, or -1 with errno (fd closed either way on failure). */
int fk_bind_prepare(int fd, const char *target, fk_bind *b);
void fk_bind_release(fk_bind *b);

/* In the parent, before the child is started: a detached, read-only clone of each input's mount
 * (trees[i], close-on-exec). 0, or -1 with errno and *failed the index (nothing left open). */
int fk_binds_clone(const fk_bind *b, size_t n, int *trees, size_t *failed);
void fk_binds_close(int *trees, size_t n);

/* In the child between vfork and exec (system calls only): a mount namespace of its own, mounts
 * private to it, and each tree attached at its target. 0, or an errno with *failed the index. */
int fk_binds_enter(const fk_bind *b, const int *trees, size_t n, size_t *failed);

#endif
