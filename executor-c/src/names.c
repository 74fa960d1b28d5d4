#include "names.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The code point at s[*at] (advancing *at), or -1 where the bytes are not strict UTF-8: no overlong
 * form, no surrogate, nothing above U+10FFFF (what Java's and Python's decoders refuse). */
static long next_code_point(const unsigned char *s, size_t len, size_t *at) {
    unsigned char c = s[*at];
    if (c < 0x80) {
        (*at)++;
        return c;
    }
    size_t n;
    long cp, min;
    if ((c & 0xE0) == 0xC0) {
        n = 2, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        n = 3, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        n = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return -1;
    }
    if (*at + n > len) {
        return -1;
    }
    for (size_t k = 1; k < n; k++) {
        unsigned char d = s[*at + k];
        if ((d & 0xC0) != 0x80) {
            return -1;
        }
        cp = (cp << 6) | (d & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return -1;
    }
    *at += n;
    return cp;
}

static int refuse(char *err, size_t errlen, const char *what, const char *why) {
    snprintf(err, errlen, "%s %s", what, why);
    return -1;
}

static int check(const char *str, size_t len, size_t max_bytes, int may_be_absolute, const char *what, char *err,
                 size_t errlen) {
    const unsigned char *s = (const unsigned char *)str;
    if (len == 0) {
        return refuse(err, errlen, what, "must not be empty");
    }
    size_t at = 0;
    if (s[0] == '/') {
        if (!may_be_absolute) {
            return refuse(err, errlen, what, "must be relative (no leading '/')");
        }
        at = 1;
    }
    size_t seg_start = at;
    for (;;) {
        int end = at == len;
        if (end || s[at] == '/') {
            size_t n = at - seg_start;
            if (n == 0) {
                return refuse(err, errlen, what, "must not have an empty segment (a leading, trailing or doubled '/')");
            }
            if (n <= 2 && s[seg_start] == '.' && (n == 1 || s[seg_start + 1] == '.')) {
                return refuse(err, errlen, what, "must not have a '.' or '..' segment");
            }
            if (n > FK_MAX_SEGMENT_BYTES) {
                return refuse(err, errlen, what, "must not have a segment over 255 bytes");
            }
            if (end) {
                break;
            }
            seg_start = ++at;
            continue;
        }
        long cp = next_code_point(s, len, &at);
        if (cp < 0) {
            return refuse(err, errlen, what, "must be valid UTF-8");
        }
        if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) {
            snprintf(err, errlen, "%s must not hold control characters (NUL, newline, ...), found U+%04lX", what,
                     (unsigned long)cp);
            return -1;
        }
    }
    if (len > max_bytes) {
        snprintf(err, errlen, "%s must be at most %zu bytes, got %zu", what, max_bytes, len);
        return -1;
    }
    return 0;
}

int fk_id_check(const char *s, size_t len, char *err, size_t errlen) {
    return check(s, len, FK_MAX_ID_BYTES, 0, "an object id", err, errlen);
}

int fk_output_path_check(const char *s, size_t len, char *err, size_t errlen) {
    return check(s, len, FK_MAX_PATH_BYTES, 1, "an output path", err, errlen);
}

int fk_input_name_check(const char *s, size_t len, char *err, size_t errlen) {
    if (len == 0) {
        return 0;
    }
    size_t plain = s[len - 1] == '/' ? len - 1 : len;
    if (plain == 0 || memchr(s, '/', plain) || (plain == 1 && s[0] == '.')
        || (plain == 2 && s[0] == '.' && s[1] == '.')) {
        return refuse(err, errlen, "an input's name", "must be a plain file name, or a directory's name and a slash");
    }
    return check(s, plain, FK_MAX_SEGMENT_BYTES, 0, "an input's name", err, errlen);
}
