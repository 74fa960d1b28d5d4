/* Unpacking an object for a task, with the system's gzip and tar: what an input declared as
 * "unpack": gzip, tar or tar.gz becomes before the task sees it (docs/data-diffusion.md). */
#ifndef FK_UNPACK_H
#define FK_UNPACK_H

#include <stddef.h>
#include <stdint.h>

/* Unpacks packed into target (unpack mode 1 gzip, 2 tar, 3 tar.gz); returns bytes written or -1
 * with err (an archive holding links is refused, and target removed). */
int64_t fk_unpack(const char *packed, int mode, const char *target, char *err, size_t errlen);

#endif
