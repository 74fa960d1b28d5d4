/* Logging to stderr with a UTC timestamp, the level and the executor id; thread-safe (one
 * fprintf per line). And the error messages functions hand back (fk_errf). */
#ifndef FK_LOG_H
#define FK_LOG_H

#include <stddef.h>

enum fk_level { FK_LOG_DEBUG = 0, FK_LOG_INFO = 1, FK_LOG_WARN = 2, FK_LOG_ERROR = 3 };

void fk_log_setup(const char *executor_id, int min_level);
void fk_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define fk_debug(...) fk_log(FK_LOG_DEBUG, __VA_ARGS__)
#define fk_info(...) fk_log(FK_LOG_INFO, __VA_ARGS__)
#define fk_warn(...) fk_log(FK_LOG_WARN, __VA_ARGS__)
#define fk_error(...) fk_log(FK_LOG_ERROR, __VA_ARGS__)

/* Formats why something failed into err (errlen bytes): what a function returning -1 "with err" does. */
void fk_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
