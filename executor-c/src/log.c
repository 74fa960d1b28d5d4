#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

static const char *who = "falkon-executor-c";
static int threshold = FK_LOG_INFO;

void fk_log_setup(const char *executor_id, int min_level) {
    who = executor_id;
    threshold = min_level;
}

void fk_log(int level, const char *fmt, ...) {
    if (level < threshold) {
        return;
    }
    static const char *names[] = {"DEBUG", "INFO", "WARN", "ERROR"};
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    /* the Java side's layout (falkon-logback.xml): UTC timestamp, level, logger - message */
    fprintf(stderr, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %-5s Executor - executor %s: %s\n", tm.tm_year + 1900,
            tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, names[level], who, msg);
}

void fk_errf(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}
