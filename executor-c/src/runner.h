/* Runs one task at a time as an OS process (one runner per slot): vfork + exec into its own
 * process group, stdout and stderr read through pipes up to a cap (the rest is drained and
 * dropped, and the truncation flagged), the wall-time limit enforced by killing the group.
 * Nothing here blocks another slot: each runner waits on its own pipes and pidfd. */
#ifndef FK_RUNNER_H
#define FK_RUNNER_H

#include "proto.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct {
    pthread_mutex_t lock;
    pid_t pid;         /* the running task's leader, not yet reaped; 0 when none */
    uint64_t task;     /* the task being run */
    int active;        /* a task is being run (from before the spawn to the end) */
    int cancelled;
    int timed_out;
    int closed;        /* the executor is stopping: start nothing more */
    size_t cap;
    const char *workdir; /* for tasks that name none */
    uint8_t *out, *err;  /* capture buffers of cap bytes */
    char *last_name, *last_path; /* the last PATH lookup */
    int confine;       /* set by the slot before fk_run: the task runs on cpus, not the executor's set */
    cpu_set_t cpus;
    struct fk_worker *worker;  /* this slot's persistent worker, or NULL (worker.h) */
    int worker_max_tasks;      /* replace it after this many tasks (0: never) */
    int64_t worker_max_mib;    /* ... or when its resident memory is over this after a task (0: never) */
} fk_runner;

void fk_runner_init(fk_runner *r, size_t cap, const char *workdir);
void fk_runner_destroy(fk_runner *r);

/* Runs spec as task_id; extra_env (NULL-terminated "K=V" strings, may be NULL) is added to the
 * task's environment, and workdir, when not NULL, is used if the spec names none. Fills out. */
void fk_run(fk_runner *r, uint64_t task_id, const fk_spec *spec, char *const *extra_env, const char *workdir,
            fk_exec *out);

/* Kills task_id's process group if this runner is running it; returns whether it was. */
int fk_runner_cancel(fk_runner *r, uint64_t task_id);
/* Kills whatever it is running (the connection is gone). */
void fk_runner_kill(fk_runner *r);
/* Kills whatever it is running and refuses to start anything more (the executor is stopping). */
void fk_runner_close(fk_runner *r);

/* Fills out as a task that did not run to an exit: status, detail (taken), started, now. */
void fk_exec_fail(fk_exec *out, uint8_t status, int64_t started, fk_str detail);
fk_str fk_str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The executor's environment with spec's variables and extra ("K=V", NULL-terminated, may be NULL)
 * replacing or adding; free with fk_free_env(env, *owned). */
char **fk_merged_env(const fk_spec *spec, char *const *extra, char ***owned);
void fk_free_env(char **env, char **owned);
/* Kills the process group of a leader not yet reaped (with r->lock held). */
void fk_kill_group(pid_t leader);

int64_t fk_now_micros(void);
int64_t fk_mono_millis(void);

#endif
