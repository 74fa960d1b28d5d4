/* The one rule for what may leave a sandbox (docs/data-diffusion.md, "What may leave a sandbox"), as the
 * Java executor's Sandbox states it too. A declared output is resolved once, to a file held open:
 *  - in the sandbox (a relative path, the task naming no directory of its own): resolved beneath the
 *    sandbox (openat2 RESOLVE_BENEATH); a symbolic link is followed while it stays in the sandbox, and one
 *    that leads out of it refuses the output. A regular file reached without any symbolic link and with
 *    one name (one hard link) is the sandbox's own and may be moved; any other is copied;
 *  - anywhere else (an absolute path, or the task's own working directory): the file is the user's. It
 *    is copied, never moved, renamed or deleted.
 * Either way a saved copy has the file's permission bits, as a moved file keeps them. */
#ifndef FK_OUTFILE_H
#define FK_OUTFILE_H

#include <stddef.h>
#include <sys/stat.h>

typedef struct {
    int fd;          /* the file, open for reading */
    int dirfd;       /* its directory, when it may be moved; -1 otherwise */
    char name[256];  /* its name in dirfd */
    int movable;     /* the sandbox's own file: reached without a symbolic link, one hard link */
    struct stat st;  /* of fd */
} fk_outfile;

/* Resolves output path (as declared) of a task whose sandbox is sandbox and working directory workdir.
 * 0 with *f open; 1 when there is no such regular file (not written); -1 when the rule refuses it
 * (err says why, naming path and id). */
int fk_outfile_open(const char *sandbox, const char *workdir, const char *path, const char *id, fk_outfile *f,
                    char *err, size_t errlen);
void fk_outfile_close(fk_outfile *f);
/* Puts the file at to (a new name Falkon made): renamed there when it may be moved (same file system),
 * else copied from its open descriptor with its permission bits; forced to disk when durable.
 * 0, or -1 with errno and nothing left at to. */
int fk_outfile_take(fk_outfile *f, const char *to, int durable);
/* Undoes a take that moved the file (its copy at from goes back where the task left it); 0 or -1. */
int fk_outfile_put_back(fk_outfile *f, const char *from);

#endif
