/* The one canonical form of object ids, output paths and input names (docs/data-diffusion.md, "Names"):
 * the rule of Java's io.falkon.protocol.ObjectId and Python's falkon.names, held to the same answer for
 * every byte string of protocol/src/test/resources/names.txt (tests/test_names.c).
 *
 * An object id is 1..1024 bytes of valid UTF-8, relative, of segments separated by single slashes, each
 * 1..255 bytes and neither "." nor "..", without a control character (U+0000..U+001F, U+007F..U+009F: so
 * no NUL can cut it short, no newline can make it two). An output path is the same but may be absolute
 * and up to 4096 bytes. An input name is empty, one segment, or one segment and a slash.
 * Each returns 0 when s (len bytes, NUL inside included) is of its kind, else -1 with the reason in err. */
#ifndef FK_NAMES_H
#define FK_NAMES_H

#include <stddef.h>

#define FK_MAX_ID_BYTES 1024
#define FK_MAX_PATH_BYTES 4096
#define FK_MAX_SEGMENT_BYTES 255

int fk_id_check(const char *s, size_t len, char *err, size_t errlen);
int fk_output_path_check(const char *s, size_t len, char *err, size_t errlen);
int fk_input_name_check(const char *s, size_t len, char *err, size_t errlen);

#endif
