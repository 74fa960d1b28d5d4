/* Many small outputs as one file (seed 003): the declared outputs a task marks archived are appended
 * to this executor's current tar archive in the output store, ROOT/archives/PREFIX-N.tar, each entry
 * named by its object id (a PAX header for ids over 99 bytes), and forced to disk before the task is
 * reported, so the archive holds only whole entries at every moment. Past the threshold an archive
 * is finished (tar's end blocks) and the next entry begins another; fk_archive_close finishes the
 * last. The Java executor's OutputArchive does the same with Commons Compress. Thread-safe. */
#ifndef FK_ARCHIVE_H
#define FK_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#define FK_ARCHIVE_THRESHOLD (64LL << 20)

typedef struct fk_archive fk_archive;

/* Nothing is created until the first append. prefix names this executor's archives (its id). */
fk_archive *fk_archive_new(const char *root, const char *prefix, int64_t threshold);

/* Where an appended entry's bytes are: the archive (relative to the root), offset, size, SHA-256. */
typedef struct {
    char archive[256];
    int64_t offset;
    int64_t size;
    char sha256[65];
} fk_archived;

/* Appends the file open at fd (read from its start) as entry id and forces it to disk. An id that is not
 * canonical (names.h: a member name with "..", an absolute one, a NUL) is refused, so no extractor can
 * write outside its destination. 0, or -1 with err (after a failed write the archive ends there). */
int fk_archive_append(fk_archive *a, const char *id, int fd, fk_archived *out, char *err, size_t errlen);

/* Finishes the current archive and frees a. */
void fk_archive_close(fk_archive *a);

#endif
