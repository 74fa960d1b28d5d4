/* File-system helpers shared by the cache, the staging and the executor. */
#ifndef FK_FSUTIL_H
#define FK_FSUTIL_H

#include <stdint.h>

/* Removes a file or directory tree without following symbolic links; ignores what is missing. */
void fk_rmtree(const char *path);
/* Creates a directory and its parents; 0 or -1 (errno set). */
int fk_mkdirs(const char *path);
/* Total bytes of the regular files under path (a file: its size); symbolic links are removed
 * on the way, as the Java unpacker skips them. -1 on error. */
int64_t fk_tree_size_unlinking(const char *path);
/* Moves a file, copying when rename cannot cross file systems; 0 or -1 (errno set). */
int fk_move(const char *from, const char *to);

#endif
