/* Data diffusion around one task, as the Java executor's Staging does: inputs fetched (cache,
 * peer or shared store) and linked into a fresh sandbox that becomes the working directory
 * unless the task names one; FALKON_INPUT_DIR, FALKON_INPUT_<i> and FALKON_INPUTS set; after
 * success, declared outputs registered in the cache; a DATA_STATS extension on the result. */
#ifndef FK_STAGING_H
#define FK_STAGING_H

#include "cache.h"
#include "runner.h"

typedef struct {
    fk_cache *cache;       /* NULL: inputs copied from the store for each task */
    const char *store;     /* store root for relative sources, or NULL */
    char *sandboxes;       /* where sandboxes are made */
} fk_staging;

/* Whether the task has inputs or outputs. */
int fk_staging_needed(const fk_spec *spec);

void fk_staging_run(fk_staging *st, fk_runner *r, uint64_t task_id, const fk_spec *spec, const fk_hint *hints,
                    size_t nhints, int bypass, fk_exec *out);

#endif
