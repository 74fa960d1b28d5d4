/* Process helpers and clocks shared by the runners of tasks (runner.c: a process per task; worker.c: a
 * persistent worker per slot): the clocks, an environment built for a task, killing a process group, and
 * an execution that did not run to an exit. Nothing here knows a runner. */
#ifndef FK_PROC_H
#define FK_PROC_H

#include "proto.h"

#include <stdint.h>
#include <sys/types.h>

/* Wall-clock time and a monotonic tick. */
int64_t fk_now_micros(void);
int64_t fk_mono_millis(void);

/* Fills out as a task that did not run to an exit: status, detail (taken), started, now. */
void fk_exec_fail(fk_exec *out, uint8_t status, int64_t started, fk_str detail);
fk_str fk_str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The executor's environment with spec's variables and extra ("K=V", NULL-terminated, may be NULL)
 * replacing or adding; free with fk_free_env(env, *owned). */
char **fk_merged_env(const fk_spec *spec, char *const *extra, char ***owned);
void fk_free_env(char **env, char **owned);
/* Kills the process group of a leader not yet reaped (the caller keeps it unreaped meanwhile). */
void fk_kill_group(pid_t leader);

#endif
