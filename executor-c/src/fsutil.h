/* File-system helpers shared by the cache, the staging and the executor. */
#ifndef FK_FSUTIL_H
#define FK_FSUTIL_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

/* Removes a file or directory tree without following symbolic links; ignores what is missing. */
void fk_rmtree(const char *path);
/* Creates a directory and its parents; 0 or -1 (errno set). */
int fk_mkdirs(const char *path);
/* The same with the mode of the directories it creates (0700 for what holds task data: the cache). */
int fk_mkdirs_mode(const char *path, mode_t mode);
/* Total bytes of the regular files under path (a file: its size). -1 on error; -2 when the tree
 * holds a symbolic link (its name, relative to path, in link; nothing is followed). */
int64_t fk_tree_size_plain(const char *path, char *link, size_t linklen);
/* A private copy of a file or directory tree (links are not followed): reflinked where the file
 * system can (FICLONE), else copied in the kernel (copy_file_range), else read and written.
 * 0 or -1 (errno set). */
int fk_clone(const char *from, const char *to);

/* Copies the first size bytes of in to out: a reflink if the file system shares extents, else in
 * the kernel (copy_file_range), else by reading and writing. 0, or -1 with errno. */
int fk_copy_fd(int in, int out, off_t size);
/* Copies the first size bytes of in (from its start) to a new file to, made with exactly mode (whatever
 * the umask) and forced to disk when durable; 0, or -1 with errno and nothing left at to. */
int fk_copy_to(int in, off_t size, const char *to, mode_t mode, int durable);
/* Writes all n bytes to fd (a file or pipe), retrying after signals; 0 or -1 (errno set). */
int fk_write_all(int fd, const void *p, size_t n);
/* The same to a connected socket, without SIGPIPE when the other end has gone. */
int fk_send_all(int fd, const void *p, size_t n);
/* Moves a file, copying when rename cannot cross file systems; 0 or -1 (errno set). */
int fk_move(const char *from, const char *to);

#endif
