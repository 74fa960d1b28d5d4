/* A minimal test harness: CHECK records a failure with its location and carries on, so one
 * run reports every broken expectation; main returns the failure count. */
#ifndef FK_CHECK_H
#define FK_CHECK_H

#include <stdio.h>

static int check_failures;

#define CHECK(cond, ...)                                                              \
    do {                                                                              \
        if (!(cond)) {                                                                \
            check_failures++;                                                         \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond);  \
            fprintf(stderr, __VA_ARGS__);                                             \
            fputc('\n', stderr);                                                      \
        }                                                                             \
    } while (0)

#endif
