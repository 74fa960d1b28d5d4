/* Data diffusion around one task, as the Java executor's Staging does: inputs fetched (cache,
 * peer or shared store) and copied into a fresh sandbox (the task's own copies) that becomes the
 * working directory unless the task names one; FALKON_INPUT_DIR, FALKON_INPUT_<i> and
 * FALKON_INPUTS set; after exit 0, declared outputs saved to the output store (written through)
 * and kept in the cache, else the result is OUTPUT_FAILED; a task's inputs fetched concurrently (up to
 * FK_CONCURRENT_FETCHES at once), two inputs of one file name refused; a DATA_STATS extension on the result;
 * fetch failures that would recur anywhere flagged permanent. */
#ifndef FK_STAGING_H
#define FK_STAGING_H

#include "cache.h"
#include "runner.h"

/* How many inputs of one task are fetched at once (the Java executor's Staging.CONCURRENT_FETCHES). */
#define FK_CONCURRENT_FETCHES 4

typedef struct {
    fk_cache *cache;       /* NULL: inputs copied from the store for each task */
    const char *store;     /* store root for relative sources, or NULL */
    const char *outputs;   /* where declared outputs are saved (ROOT/ID), or NULL: nowhere */
    struct fk_archive *archive; /* where outputs marked archived go (with outputs), or NULL */
    char *sandboxes;       /* where sandboxes are made */
} fk_staging;

/* Whether the task has inputs or outputs. */
int fk_staging_needed(const fk_spec *spec);

/* Stages the task's inputs, runs it and, after exit 0, saves its outputs; the result in out. */
void fk_staging_run(fk_staging *st, fk_runner *r, uint64_t task_id, const fk_spec *spec, const fk_hint *hints,
                    size_t nhints, int bypass, fk_exec *out);

/* fk_staging_run in two halves, so that the slot can take its next task while the last one's outputs
 * go to disk: begin stages and runs, and returns what is left (NULL when nothing is: out is final);
 * finish, on any thread, saves the outputs (forced to disk before they are renamed into place, as
 * before), completes out and removes the sandbox. spec must live until finish returns. */
typedef struct fk_staged fk_staged;
fk_staged *fk_staging_begin(fk_staging *st, fk_runner *r, uint64_t task_id, const fk_spec *spec,
                            const fk_hint *hints, size_t nhints, int bypass, fk_exec *out);
void fk_staging_finish(fk_staging *st, const fk_spec *spec, fk_staged *rest, fk_exec *out);

#endif
