/* Runs one task at a time as an OS process (one runner per slot): vfork + exec into its own
 * process group, stdout and stderr read through pipes up to a cap (the rest is drained and
 * dropped, and the truncation flagged), the wall-time limit enforced by killing the group.
 * Nothing here blocks another slot: each runner waits on its own pipes and pidfd. */
#ifndef FK_RUNNER_H
#define FK_RUNNER_H

#include "binds.h"
#include "proc.h"
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
    const fk_bind *binds; /* set by the staging before fk_run: inputs given in place (binds.h) */
    size_t nbinds;
    struct fk_worker *worker;  /* this slot's persistent worker, or NULL (worker.h) */
    int worker_max_tasks;      /* replace it after this many tasks (0: never) */
    int64_t worker_max_mib;    /* ... or when its resident memory is over this after a task (0: never) */
} fk_runner;

void fk_runner_init(fk_runner *r, size_t cap, const char *workdir);
void fk_runner_destroy(fk_runner *r);

/* Runs spec as task_id, as a process of its own (worker.h's fk_run is a slot's way in: it hands a task that
 * names a persistent worker to that worker); extra_env (NULL-terminated "K=V" strings, may be NULL) is added
 * to the task's environment, and workdir, when not NULL, is used if the spec names none. Fills out. */
void fk_run_process(fk_runner *r, uint64_t task_id, const fk_spec *spec, char *const *extra_env,
                    const char *workdir, fk_exec *out);

/* Kills task_id's process group if this runner is running it; returns whether it was. */
int fk_runner_cancel(fk_runner *r, uint64_t task_id);
/* Kills whatever it is running (the connection is gone). */
void fk_runner_kill(fk_runner *r);
/* Kills whatever it is running and refuses to start anything more (the executor is stopping). */
void fk_runner_close(fk_runner *r);


#endif
