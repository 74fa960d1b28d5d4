/* The canonical text form of a message (docs/protocol.md section 8), byte for byte the same
 * as the Java MessageDump: the golden-vector tests compare it with the vectors' .txt files. */
#ifndef FK_DUMP_H
#define FK_DUMP_H

#include "buf.h"
#include "proto.h"

/* Appends the dump of m to out (not NUL-terminated). Returns 0, or -1 if a spec inside a
 * DISPATCH does not decode. */
int fk_dump(const fk_msg *m, fk_buf *out);

#endif
