/* Persistent workers (docs/protocol.md section 9): a task whose spec names a WORKER is not started
 * as a process; the slot keeps one resident process of the worker's command, started on the first
 * such task and kept for every later one of the same command and environment, and hands it each
 * task as a request on its standard input, reading the response from its standard output.
 *
 * The worker is killed and replaced when a task's wall time passes, when the task is cancelled,
 * when it breaks the framing, and after the runner's limits (worker_max_tasks, worker_max_mib). A task
 * ends successfully only with its worker's answer: a worker that exits, is killed or closes its output
 * first fails the task (LAUNCH_FAILED, permanent) naming which. Its standard error is the executor's.
 * Cancels reach it through the runner (r->pid is the worker while it runs a task).
 *
 * fk_run is a slot's way to run any task: the worker's when its spec names one, else a process of its
 * own (runner.h, which knows nothing of workers). */
#ifndef FK_WORKER_H
#define FK_WORKER_H

#include "runner.h"

/* Runs spec as task_id on slot r: on its persistent worker when the spec names one (starting or replacing
 * it), else as a process (fk_run_process); extra_env and workdir as there. Fills out. */
void fk_run(fk_runner *r, uint64_t task_id, const fk_spec *spec, char *const *extra_env, const char *workdir,
            fk_exec *out);

/* Runs spec, whose WORKER field is w, on r's worker (starting or replacing it); extra_env and
 * workdir as for fk_run_process. Fills out. */
void fk_worker_run(fk_runner *r, uint64_t task_id, const fk_spec *spec, const fk_ext *w, char *const *extra_env,
                   const char *workdir, fk_exec *out);

/* Ends r's worker, if it has one (the executor is stopping): before fk_runner_destroy. */
void fk_worker_stop(fk_runner *r);

/* The worker framing, for the golden-vector tests: encodes a request; decodes a response body
 * (after its length prefix), 0 or -1 with err filled in naming the field. */
void fk_worker_request(fk_buf *b, uint64_t task_id, uint32_t max_output, const fk_spec *spec, char *const *extra_env,
                       const char *dir, const uint8_t *payload, size_t npayload);
typedef struct {
    uint64_t task_id;
    int32_t exit_code;
    const uint8_t *out, *err; /* into the body */
    size_t nout, nerr;
} fk_worker_response;
int fk_worker_response_decode(const uint8_t *body, size_t len, fk_worker_response *r, char *err, size_t errlen);

#endif
