#include "staging.h"

#include "archive.h"
#include "names.h"
#include "outfile.h"

#include "fetch.h"
#include "fsutil.h"
#include "log.h"
#include "worker.h"
#include "unpack.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static atomic_ulong sandbox_seq;

int fk_staging_needed(const fk_spec *spec) {
    return fk_ext_find(&spec->ext, FK_EXT_INPUTS) != NULL || fk_ext_find(&spec->ext, FK_EXT_OUTPUTS) != NULL;
}

/* Whether the input goes into a directory of the sandbox (its name is "DIR/"). */
static int in_directory(const fk_input *in) {
    return in->name.len && in->name.s[in->name.len - 1] == '/';
}

/* Where an input goes, relative to the sandbox (as TaskInput.fileName): its name; else the last
 * part of its id ("input" when that is empty, "." or ".."), after the name when that is "DIR/".
 * A new string. */
static char *file_name(const fk_input *in) {
    if (in->name.len && !in_directory(in)) {
        char *s = strdup(in->name.s);
        if (!s) {
            abort();
        }
        return s;
    }
    const char *slash = strrchr(in->id.s, '/');
    const char *base = slash ? slash + 1 : in->id.s;
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
        base = "input";
    }
    size_t n = in->name.len + strlen(base) + 1;
    char *s = malloc(n);
    if (!s) {
        abort();
    }
    snprintf(s, n, "%s%s", in->name.len ? in->name.s : "", base);
    return s;
}

/* A byte string and where it came from, for sorting: a gather task has a thousand inputs or more, and
 * comparing each with each (names, directories, hints) cost more than fetching them. */
typedef struct {
    const char *s;
    size_t len;
    size_t index;
} keyed;

static int by_bytes(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    int c = memcmp(x->s, y->s, x->len < y->len ? x->len : y->len);
    if (c == 0) {
        c = (x->len > y->len) - (x->len < y->len);
    }
    return c;
}

/* by_bytes, then by place: of equal strings, the first comes first */
static int by_bytes_then_index(const void *a, const void *b) {
    int c = by_bytes(a, b);
    if (c == 0) {
        const keyed *x = a, *y = b;
        c = (x->index > y->index) - (x->index < y->index);
    }
    return c;
}

static keyed *sorted_keys(size_t n) {
    keyed *k = calloc(n ? n : 1, sizeof *k);
    if (!k) {
        abort();
    }
    return k;
}

/* Whether two inputs would be staged under one name, or one where another's directory goes (the
 * dispatcher refuses such a task; a spec from elsewhere is checked here too): 0, else -1 with the
 * reason. names[i] is file_name(&inputs[i]). Sorted, not pairwise: n log n. */
static int staging_clash(const fk_input *inputs, char *const *names, size_t n, char *err, size_t errlen) {
    keyed *files = sorted_keys(n), *dirs = sorted_keys(n);
    size_t ndirs = 0;
    for (size_t i = 0; i < n; i++) {
        files[i] = (keyed){names[i], strlen(names[i]), i};
        if (in_directory(&inputs[i])) {
            dirs[ndirs++] = (keyed){inputs[i].name.s, inputs[i].name.len - 1, i};
        }
    }
    qsort(files, n, sizeof *files, by_bytes_then_index);
    qsort(dirs, ndirs, sizeof *dirs, by_bytes);
    int rc = 0;
    for (size_t k = 1; k < n && rc == 0; k++) {
        if (by_bytes(&files[k - 1], &files[k]) == 0) {
            snprintf(err, errlen, "inputs[%zu] would be staged as '%s', like inputs[%zu]: give one of them "
                     "another name", files[k].index, files[k].s, files[k - 1].index);
            rc = -1;
        }
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        keyed name = {names[i], strlen(names[i]), i};
        const keyed *d = ndirs ? bsearch(&name, dirs, ndirs, sizeof *dirs, by_bytes) : NULL;
        if (d) {
            snprintf(err, errlen, "inputs[%zu] would be staged as '%s', the directory inputs[%zu] goes into: give "
                     "one of them another name", i, names[i], d->index);
            rc = -1;
        }
    }
    free(files);
    free(dirs);
    return rc;
}

/* Each input's hint (the peers said to hold it), or NULL: out[i] for inputs[i]. Of two hints for one
 * id, the later counts. */
static void hints_by_input(const fk_input *inputs, size_t n, const fk_hint *hints, size_t nhints,
                           const fk_hint **out) {
    keyed *byid = sorted_keys(nhints);
    for (size_t h = 0; h < nhints; h++) {
        byid[h] = (keyed){hints[h].id.s, hints[h].id.len, h};
    }
    qsort(byid, nhints, sizeof *byid, by_bytes_then_index);
    for (size_t i = 0; i < n; i++) {
        keyed id = {inputs[i].id.s, inputs[i].id.len, 0};
        const keyed *k = nhints ? bsearch(&id, byid, nhints, sizeof *byid, by_bytes) : NULL;
        while (k && k + 1 < byid + nhints && by_bytes(k, k + 1) == 0) {
            k++;
        }
        out[i] = k ? &hints[k->index] : NULL;
    }
    free(byid);
}

static void fetch_failed(fk_exec *out, const char *why, int permanent) {
    memset(out, 0, sizeof *out);
    out->status = FK_FETCH_FAILED;
    out->flags = permanent ? FK_FLAG_PERMANENT : 0;
    out->exit_code = -1;
    out->started_us = out->finished_us = fk_now_micros();
    out->out = fk_str_dup("", 0);
    out->err = fk_str_dup("", 0);
    out->detail = fk_str_of(why);
}

static char *join(const char *a, const char *b) {
    size_t n = strlen(a) + strlen(b) + 2;
    char *s = malloc(n);
    if (!s) {
        abort();
    }
    snprintf(s, n, "%s/%s", a, b);
    return s;
}

static char *env_var(const char *name, const char *value) {
    size_t n = strlen(name) + strlen(value) + 2;
    char *s = malloc(n);
    if (!s) {
        abort();
    }
    snprintf(s, n, "%s=%s", name, value);
    return s;
}

/* Gives the task in as an empty file at target with the open file fd to mount there (binds.h). 0, or -1
 * with err (fd closed). */
static int bind_input(int fd, const fk_input *in, const char *target, fk_bind *bind, char *err, size_t errlen) {
    if (fk_bind_prepare(fd, target, bind) != 0) {
        snprintf(err, errlen, "cannot give %s in place in the sandbox: %s", in->id.s, strerror(errno));
        return -1;
    }
    return 0;
}

/* Stages one input at target: the task's own copy, or, where bind is not NULL (a read-only input this
 * executor may give in place), the cached or stored file opened for a read-only mount; counts[source]
 * and counts[3 + source] (bytes) are bumped, counts[6] when a stale cached copy was fetched again. */
static int stage(fk_staging *st, const fk_input *in, const fk_hint *hint, int bypass, fk_lease *gathered, const char *target, fk_bind *bind, uint64_t *counts, int *permanent, char *err, size_t errlen) {
    if ((!st->cache || bypass) && bind && fk_store_plain(in)) {
        int64_t size;
        int fd = fk_store_open(st->store, in, &size, permanent, err, errlen);
        if (fd < 0 || bind_input(fd, in, target, bind, err, errlen) != 0) {
            return -1;
        }
        counts[2]++;
        counts[5] += (uint64_t)size;
        return 0;
    }
    if (!st->cache || bypass) {
        /* no data diffusion: this task's own copy, straight from the shared store */
        char packed[PATH_MAX];
        if (in->unpack == 0) {
            snprintf(packed, sizeof packed, "%s", target);
        } else {
            const char *slash = strrchr(target, '/');
            snprintf(packed, sizeof packed, "%.*s/.packed-%s", (int)(slash - target), target, slash + 1);
        }
        fk_input stored = *in;
        stored.unpack = 0;
        int64_t n = fk_store_copy(st->store, &stored, packed, permanent, err, errlen);
        if (n < 0) {
            return -1;
        }
        if (in->unpack != 0) {
            char why[512];
            int64_t u = fk_unpack(packed, in->unpack, target, why, sizeof why);
            unlink(packed);
            if (u < 0) {
                snprintf(err, errlen, "cannot unpack %s: %s", in->id.s, why);
                *permanent = 1;
                return -1;
            }
        }
        counts[2]++;
        counts[5] += (uint64_t)n;
        return 0;
    }
    const fk_str *peers = hint ? hint->peers : NULL;
    size_t npeers = hint ? hint->npeers : 0;
    fk_lease lease;
    if (gathered->path) { /* it came with the others its peer holds */
        lease = *gathered;
        memset(gathered, 0, sizeof *gathered);
    } else if (fk_cache_lease(st->cache, in, peers, npeers, &lease, permanent, err, errlen) != 0) {
        return -1;
    }
    /* the lease pins the cached copy only while this task's copy is made, or its file is opened for a
     * mount: an open file outlives its eviction (cached files are never rewritten, only retired) */
    int rc;
    int fd = -1;
    struct stat fst;
    if (bind && !lease.own && (fd = open(lease.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) >= 0
        && fstat(fd, &fst) == 0 && S_ISREG(fst.st_mode)) {
        rc = bind_input(fd, in, target, bind, err, errlen);
    } else {
        if (fd >= 0) {
            close(fd);
        }
        rc = fk_lease_copy(&lease, target);
        if (rc != 0) {
            snprintf(err, errlen, "cannot copy %s into the sandbox: %s", in->id.s, strerror(errno));
        }
    }
    if (rc == 0) {
        int k = lease.source;
        counts[k]++;
        counts[3 + k] += (uint64_t)(k == FK_SRC_LOCAL ? lease.size : lease.moved);
        counts[6] += lease.refetched ? 1 : 0;
    }
    fk_cache_release(st->cache, &lease);
    return rc;
}

/* A task's inputs staged by several threads: each takes the next input not yet taken; after the
 * first failure none is started. The counts and the first error are merged under the lock. */
typedef struct {
    fk_staging *st;
    const fk_input *inputs;
    char **paths;
    size_t n;
    const fk_hint **hints; /* per input: its hint, or NULL */
    int bypass;
    fk_lease *gathered; /* per input: leased by the gather, or zeroed */
    fk_bind *binds;     /* per input: where it may be given in place (fd -1 until it is), or NULL */
    pthread_mutex_t lock;
    size_t next;
    int failed;
    int permanent;
    uint64_t counts[7];
    char err[1024];
} fk_gather;

static void *stage_some(void *arg) {
    fk_gather *g = arg;
    for (;;) {
        pthread_mutex_lock(&g->lock);
        size_t i = g->next++;
        int stop = g->failed || i >= g->n;
        pthread_mutex_unlock(&g->lock);
        if (stop) {
            return NULL;
        }
        uint64_t counts[7] = {0};
        int permanent = 0;
        char err[1024];
        fk_bind *bind = g->binds && g->binds[i].fd == -1 ? &g->binds[i] : NULL;
        int rc = stage(g->st, &g->inputs[i], g->hints[i], g->bypass, &g->gathered[i], g->paths[i], bind, counts,
                       &permanent, err, sizeof err);
        pthread_mutex_lock(&g->lock);
        for (int k = 0; k < 7; k++) {
            g->counts[k] += counts[k];
        }
        if (rc != 0 && !g->failed) {
            g->failed = 1;
            g->permanent = permanent;
            snprintf(g->err, sizeof g->err, "%s", err);
        }
        pthread_mutex_unlock(&g->lock);
    }
}

/* Stages every input, up to FK_CONCURRENT_FETCHES at once: this thread and helpers it starts (as
 * the Java executor's Staging does). Returns once every fetch under way has ended, so none writes
 * into a sandbox being removed: 0, or -1 with the first error. */
static int stage_all(fk_gather *g, uint64_t *counts, int *permanent, char *err, size_t errlen) {
    pthread_mutex_init(&g->lock, NULL);
    pthread_t helpers[FK_CONCURRENT_FETCHES - 1];
    size_t started = 0;
    size_t want = g->n < FK_CONCURRENT_FETCHES ? g->n : FK_CONCURRENT_FETCHES;
    for (size_t h = 1; h < want; h++) {
        if (pthread_create(&helpers[started], NULL, stage_some, g) != 0) {
            break; /* fewer helpers: still correct, only slower */
        }
        started++;
    }
    stage_some(g);
    for (size_t h = 0; h < started; h++) {
        pthread_join(helpers[h], NULL);
    }
    pthread_mutex_destroy(&g->lock);
    memcpy(counts, g->counts, sizeof g->counts);
    if (g->failed) {
        *permanent = g->permanent;
        snprintf(err, errlen, "%s", g->err);
        return -1;
    }
    return 0;
}

/* The inputs one peer is asked for at once, and where their leases go. */
typedef struct {
    fk_cache *cache;
    const char *peer;
    const fk_input **refs;
    size_t *index; /* each one's place among the task's inputs */
    size_t n;
    fk_lease *gathered;
} peer_batch;

static void *gather_from_peer(void *arg) {
    peer_batch *b = arg;
    fk_lease *got = calloc(b->n, sizeof *got);
    if (!got) {
        abort();
    }
    fk_cache_gather(b->cache, b->peer, (const fk_input *const *)b->refs, b->n, got);
    for (size_t k = 0; k < b->n; k++) {
        b->gathered[b->index[k]] = got[k];
    }
    free(got);
    return NULL;
}

/* Seed 004's collective gather: the inputs (as stored) whose hints put them first on the same peer,
 * two or more of them, come from it in one request (fk_cache_gather); up to FK_CONCURRENT_FETCHES
 * peers are asked at once. gathered[i] is input i leased when it arrived, else zeroed. */
static void gather_inputs(fk_staging *st, const fk_input *inputs, size_t n, const fk_hint *const *hints,
                          fk_lease *gathered) {
    const char **first = calloc(n ? n : 1, sizeof *first); /* each input's first hinted peer, or NULL */
    peer_batch *batches = calloc(n ? n : 1, sizeof *batches);
    if (!first || !batches) {
        abort();
    }
    for (size_t i = 0; i < n; i++) {
        if (hints[i] && hints[i]->npeers && inputs[i].unpack == 0) {
            first[i] = hints[i]->peers[0].s;
        }
    }
    size_t nb = 0;
    for (size_t i = 0; i < n; i++) {
        if (!first[i]) {
            continue;
        }
        size_t count = 0;
        for (size_t j = i; j < n; j++) {
            count += first[j] && strcmp(first[j], first[i]) == 0;
        }
        peer_batch *b = &batches[nb];
        b->cache = st->cache;
        b->peer = first[i];
        b->gathered = gathered;
        b->refs = calloc(count, sizeof *b->refs);
        b->index = calloc(count, sizeof *b->index);
        if (!b->refs || !b->index) {
            abort();
        }
        for (size_t j = i; j < n; j++) {
            if (j != i && first[j] && strcmp(first[j], b->peer) == 0) {
                b->refs[b->n] = &inputs[j];
                b->index[b->n++] = j;
                first[j] = NULL;
            }
        }
        b->refs[b->n] = &inputs[i];
        b->index[b->n++] = i;
        first[i] = NULL;
        if (b->n >= 2) {
            nb++;
        } else {
            free(b->refs);
            free(b->index);
            memset(b, 0, sizeof *b);
        }
    }
    for (size_t at = 0; at < nb; at += FK_CONCURRENT_FETCHES) {
        pthread_t helpers[FK_CONCURRENT_FETCHES];
        int started[FK_CONCURRENT_FETCHES] = {0};
        size_t wave = nb - at < FK_CONCURRENT_FETCHES ? nb - at : FK_CONCURRENT_FETCHES;
        for (size_t k = 1; k < wave; k++) {
            started[k] = pthread_create(&helpers[k], NULL, gather_from_peer, &batches[at + k]) == 0;
            if (!started[k]) {
                gather_from_peer(&batches[at + k]);
            }
        }
        gather_from_peer(&batches[at]);
        for (size_t k = 1; k < wave; k++) {
            if (started[k]) {
                pthread_join(helpers[k], NULL);
            }
        }
    }
    for (size_t k = 0; k < nb; k++) {
        free(batches[k].refs);
        free(batches[k].index);
    }
    free(batches);
    free(first);
}

/* Saves output id for good: ROOT/ID, taken (moved when the sandbox rule lets it, else copied: outfile.h)
 * to a partial file forced to disk, then renamed into place. 0, or -1 with err. */
static int save_output(const char *root, const char *id, fk_outfile *f, char *err, size_t errlen) {
    char why[160];
    if (fk_id_check(id, strlen(id), why, sizeof why) != 0) { /* the decoder refused it already; a spec from elsewhere */
        snprintf(err, errlen, "output id '%s' cannot be saved: %s", id, why);
        return -1;
    }
    char target[PATH_MAX], partial[PATH_MAX + 64];
    if (snprintf(target, sizeof target, "%s/%s", root, id) >= (int)sizeof target) {
        snprintf(err, errlen, "output id '%s' is too long", id);
        return -1;
    }
    char *slash = strrchr(target, '/');
    *slash = 0;
    int made = fk_mkdirs(target);
    *slash = '/';
    snprintf(partial, sizeof partial, "%.*s/.%s.partial-%d-%lu", (int)(slash - target), target, slash + 1,
             (int)getpid(), atomic_fetch_add(&sandbox_seq, 1) + 1);
    if (made != 0 || fk_outfile_take(f, partial, 1) != 0) {
        snprintf(err, errlen, "cannot save output %s to %s: %s", id, target, strerror(errno));
        return -1;
    }
    if (rename(partial, target) != 0) {
        snprintf(err, errlen, "cannot save output %s to %s: %s", id, target, strerror(errno));
        if (fk_outfile_put_back(f, partial) != 0) {
            unlink(partial);
        }
        return -1;
    }
    f->movable = 0; /* it is in the store now: what else takes it (the cache) copies it from there */
    return 0;
}

/* Saves the task's declared outputs (written through), then keeps them in the cache; a temporary one
 * is only held in the cache (its id appended to held, counted in *nheld) unless the cache cannot
 * hold it. Adds the bytes saved to *written; returns what went wrong (malloc'd), or NULL. */
static char *save_outputs(fk_staging *st, const fk_spec *spec, const char *dir, const char *sandbox, int bypass,
                          uint64_t *written, fk_buf *held, uint16_t *nheld, fk_buf *archived, uint16_t *narchived) {
    const fk_ext *x = fk_ext_find(&spec->ext, FK_EXT_OUTPUTS);
    if (!x) {
        return NULL;
    }
    fk_output *outs;
    size_t n;
    char err[1024];
    if (fk_outputs_decode(&x->value, &outs, &n, err, sizeof err) != 0) {
        return strdup(err);
    }
    const fk_ext *t = fk_ext_find(&spec->ext, FK_EXT_TEMPORARY);
    const fk_ext *arc = fk_ext_find(&spec->ext, FK_EXT_ARCHIVE);
    if ((t && fk_output_marks_decode(&t->value, outs, n, 0, err, sizeof err) != 0)
        || (arc && fk_output_marks_decode(&arc->value, outs, n, 1, err, sizeof err) != 0)) {
        fk_outputs_free(outs, n);
        return strdup(err);
    }
    int cached = st->cache && !bypass;
    int all_held = cached;
    for (size_t i = 0; i < n; i++) {
        all_held &= outs[i].temporary;
    }
    if (n > 0 && !st->outputs && !all_held) {
        fk_outputs_free(outs, n);
        return strdup("the task declares outputs but this executor has nowhere to save them "
                      "(falkon-executor-c --store DIR or --output-dir DIR)");
    }
    char problems[2048] = "";
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *path = outs[i].path.s, *id = outs[i].id.s;
        fk_outfile f;
        const char *why = NULL;
        int found = fk_outfile_open(sandbox, dir, path, id, &f, err, sizeof err);
        if (found < 0) {
            why = err;
        } else if (found > 0) {
            snprintf(err, sizeof err, "declared output %s (id %s) was not written", path, id);
            why = err;
        }
        int kept = 0;
        if (!why && outs[i].temporary && cached) {
            kept = fk_cache_hold(st->cache, id, &f, err, sizeof err);
            if (kept == 1) {
                fk_buf_blob(held, id, outs[i].id.len);
                ++*nheld;
                fk_outfile_close(&f);
                continue;
            }
            if (kept == 0 && !st->outputs) {
                snprintf(err, sizeof err, "temporary output %s (id %s) does not fit in the cache, and this executor "
                         "has nowhere else to save it (falkon-executor-c --store DIR or --output-dir DIR)", path, id);
                kept = -1;
            }
            why = kept < 0 ? err : NULL;
        }
        fk_archived entry;
        if (why) {
            /* refused, not written, or not kept: named in the problems */
        } else if (outs[i].archived) {
            if (!st->archive || fk_archive_append(st->archive, id, f.fd, &entry, err, sizeof err) != 0) {
                why = st->archive ? err : "this executor has no output archive";
            } else { /* ARCHIVED = count:u16 (id:str archive:str offset:u64 size:u64 sha256:str)* */
                fk_buf_blob(archived, id, outs[i].id.len);
                fk_buf_blob(archived, entry.archive, strlen(entry.archive));
                fk_buf_u64(archived, (uint64_t)entry.offset);
                fk_buf_u64(archived, (uint64_t)entry.size);
                fk_buf_blob(archived, entry.sha256, strlen(entry.sha256));
                ++*narchived;
                *written += (uint64_t)entry.size;
            }
        } else {
            /* the cache takes a copy next: the sandbox's own file is copied into the store, not moved */
            int movable = f.movable;
            f.movable = movable && !cached;
            if (save_output(st->outputs, id, &f, err, sizeof err) != 0) {
                why = err;
            } else {
                *written += (uint64_t)f.st.st_size;
                f.movable = movable;
                if (cached && fk_cache_register(st->cache, id, &f, err, sizeof err) != 0) {
                    /* saved already: the cache only keeps a copy for later tasks here */
                    fk_debug("output %s not kept in the cache: %s", id, err);
                }
            }
        }
        fk_outfile_close(&f);
        if (why && k < sizeof problems) {
            k += (size_t)snprintf(problems + k, sizeof problems - k, "%s%s", k ? "; " : "", why);
        }
    }
    fk_outputs_free(outs, n);
    return k ? strdup(problems) : NULL;
}

/* Appends an ext field to a result: body's bytes, after a u16 count when count > 0. */
static void add_ext(fk_exec *out, uint16_t tag, uint16_t count, const fk_buf *body) {
    fk_buf b;
    fk_buf_init(&b);
    if (count > 0) {
        fk_buf_u16(&b, count);
    }
    fk_buf_put(&b, body->data, body->len);
    out->ext.items = realloc(out->ext.items, (out->ext.n + 1) * sizeof(fk_ext));
    if (!out->ext.items) {
        abort();
    }
    out->ext.items[out->ext.n].tag = tag;
    out->ext.items[out->ext.n++].value = fk_str_dup((const char *)b.data, b.len);
    fk_buf_free(&b);
}

/* Lets go of the nheld ids encoded (as str) in held: their task failed after all. */
static void release_held(fk_cache *c, const fk_buf *held, uint16_t nheld) {
    fk_reader r;
    fk_reader_init(&r, held->data, held->len);
    fk_str *ids = calloc(nheld ? nheld : 1, sizeof *ids);
    if (!ids) {
        abort();
    }
    for (uint16_t i = 0; i < nheld; i++) {
        size_t len = 0;
        const uint8_t *id = fk_rd_blob(&r, "id", &len);
        ids[i] = fk_str_dup(id ? (const char *)id : "", id ? len : 0);
    }
    fk_cache_unhold(c, ids, nheld);
    for (uint16_t i = 0; i < nheld; i++) {
        fk_str_free(&ids[i]);
    }
    free(ids);
}

/* Why a task's outputs cannot be saved beside its read-only inputs, or 0: an output declared at a
 * read-only input's place in the sandbox would be read from the executor's side of it (the empty mount
 * point), not what the task saw (DataCodec.readOnlyClash in Java). -1 with err. */
static int read_only_clash(const fk_spec *spec, const fk_input *inputs, size_t nin, char *err, size_t errlen) {
    const fk_ext *x = fk_ext_find(&spec->ext, FK_EXT_OUTPUTS);
    if (!x || spec->workdir.len) {
        return 0;
    }
    fk_output *outs;
    size_t n;
    if (fk_outputs_decode(&x->value, &outs, &n, err, errlen) != 0) {
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < nin && rc == 0; i++) {
        if (!inputs[i].read_only) {
            continue;
        }
        char *name = file_name(&inputs[i]);
        for (size_t k = 0; k < n && rc == 0; k++) {
            if (strcmp(outs[k].path.s, name) == 0) {
                snprintf(err, errlen, "outputs[%zu] '%s' is the path of read-only inputs[%zu], which the task may not "
                         "change: drop readOnly or give the output another path", k, name, i);
                rc = -1;
            }
        }
        free(name);
    }
    fk_outputs_free(outs, n);
    return rc;
}

/* Which of a task's inputs it is given in place (binds.h): its read-only inputs as stored, up to
 * FK_MAX_BINDS, where this executor can make the mounts and the task runs as a process of its own (a
 * persistent worker outlives the task: its inputs are copies). Per input: fd -1 where it may be, -2
 * where not; NULL when none may. */
static fk_bind *in_place(fk_staging *st, const fk_spec *spec, const fk_input *inputs, size_t nin) {
    size_t want = 0;
    for (size_t i = 0; i < nin; i++) {
        want += inputs[i].read_only && inputs[i].unpack == 0;
    }
    if (want == 0 || fk_ext_find(&spec->ext, FK_EXT_WORKER) || !fk_binds_available(st->sandboxes)) {
        return NULL;
    }
    fk_bind *b = calloc(nin, sizeof *b);
    if (!b) {
        abort();
    }
    size_t given = 0;
    for (size_t i = 0; i < nin; i++) {
        int may = inputs[i].read_only && inputs[i].unpack == 0 && given < FK_MAX_BINDS;
        given += may;
        b[i].fd = may ? -1 : -2;
    }
    return b;
}

/* What is left of a task once its process has exited (fk_staging_begin). */
struct fk_staged {
    char sandbox[PATH_MAX];
    int ran;    /* the process ran: its outputs are saved and DATA_STATS added */
    int bypass;
    uint64_t counts[8];
    fk_input *inputs;
    size_t nin;
    char **names, **paths, **env;
    size_t nenv;
};

fk_staged *fk_staging_begin(fk_staging *st, fk_runner *r, uint64_t task_id, const fk_spec *spec,
                            const fk_hint *hints, size_t nhints, int bypass, fk_exec *out) {
    fk_input *inputs = NULL;
    size_t nin = 0;
    char err[1024];
    const fk_ext *x = fk_ext_find(&spec->ext, FK_EXT_INPUTS);
    if (x && fk_inputs_decode(&x->value, &inputs, &nin, err, sizeof err) != 0) {
        char why[1100];
        snprintf(why, sizeof why, "undecodable inputs: %s", err);
        fetch_failed(out, why, 1);
        return NULL;
    }
    const fk_ext *ro = fk_ext_find(&spec->ext, FK_EXT_READ_ONLY);
    if (ro && (fk_input_marks_decode(&ro->value, inputs, nin, err, sizeof err) != 0
               || read_only_clash(spec, inputs, nin, err, sizeof err) != 0)) {
        fk_inputs_free(inputs, nin);
        fetch_failed(out, err, 1);
        return NULL;
    }
    char sandbox[PATH_MAX];
    snprintf(sandbox, sizeof sandbox, "%s/task-%llu-%lu", st->sandboxes, (unsigned long long)task_id,
             atomic_fetch_add(&sandbox_seq, 1) + 1);
    char **env = calloc(nin + 3, sizeof *env);
    char **paths = calloc(nin ? nin : 1, sizeof *paths);
    if (!env || !paths) {
        abort();
    }
    uint64_t counts[8] = {0}; /* by source: hits [0..2], bytes [3..5]; refetched [6]; bytes written [7] */
    size_t nenv = 0;
    int failed = 0;
    int permanent = 0;
    int ran = 0;
    if (mkdir(sandbox, 0755) != 0) {
        snprintf(err, sizeof err, "cannot create the sandbox %s: %s", sandbox, strerror(errno));
        failed = 1;
    }
    char **names = calloc(nin ? nin : 1, sizeof *names);
    if (!names) {
        abort();
    }
    fk_bind *binds = NULL;
    size_t joined = 0;
    for (size_t i = 0; i < nin; i++) {
        names[i] = file_name(&inputs[i]);
        paths[i] = join(sandbox, names[i]);
        joined += strlen(paths[i]) + 1;
    }
    if (!failed && staging_clash(inputs, names, nin, err, sizeof err) != 0) {
        failed = permanent = 1;
    }
    /* the directories inputs go into (gather), made before the fetches start */
    for (size_t i = 0; i < nin && !failed; i++) {
        if (in_directory(&inputs[i])) {
            char *d = join(sandbox, inputs[i].name.s);
            if (mkdir(d, 0755) != 0 && errno != EEXIST) {
                snprintf(err, sizeof err, "cannot create %s in the sandbox: %s", d, strerror(errno));
                failed = 1;
            }
            free(d);
        }
    }
    if (!failed && nin > 0) {
        fk_lease *gathered = calloc(nin, sizeof *gathered);
        if (!gathered) {
            abort();
        }
        const fk_hint **hint_of = calloc(nin, sizeof *hint_of);
        if (!hint_of) {
            abort();
        }
        hints_by_input(inputs, nin, hints, nhints, hint_of);
        if (st->cache && !bypass) {
            gather_inputs(st, inputs, nin, hint_of, gathered);
        }
        binds = in_place(st, spec, inputs, nin);
        fk_gather g = {.st = st, .inputs = inputs, .paths = paths, .n = nin, .hints = hint_of, .bypass = bypass,
                       .gathered = gathered, .binds = binds};
        failed = stage_all(&g, counts, &permanent, err, sizeof err) != 0;
        for (size_t i = 0; i < nin; i++) {
            if (gathered[i].path) { /* arrived, but a failure stopped staging before it was used */
                fk_cache_release(st->cache, &gathered[i]);
            }
        }
        free(gathered);
        free(hint_of);
    }
    if (failed) {
        fetch_failed(out, err, permanent);
    } else {
        env[nenv++] = env_var("FALKON_INPUT_DIR", sandbox);
        for (size_t i = 0; i < nin; i++) {
            char name[32];
            snprintf(name, sizeof name, "FALKON_INPUT_%zu", i);
            env[nenv++] = env_var(name, paths[i]);
        }
        char *all = calloc(joined + 1, 1);
        if (!all) {
            abort();
        }
        char *at = all; /* appended in place: strcat would walk the whole list again for each path */
        for (size_t i = 0; i < nin; i++) {
            if (i) {
                *at++ = ':';
            }
            size_t len = strlen(paths[i]);
            memcpy(at, paths[i], len);
            at += len;
        }
        env[nenv++] = env_var("FALKON_INPUTS", all);
        free(all);
        /* the inputs given in place, in one list for the runner's child to mount */
        size_t nbound = 0;
        for (size_t i = 0; binds && i < nin; i++) {
            if (binds[i].fd >= 0) {
                binds[nbound++] = binds[i];
                if (nbound - 1 != i) {
                    binds[i].fd = -2;
                    binds[i].target = NULL;
                }
            }
        }
        r->binds = binds;
        r->nbinds = nbound;
        fk_run(r, task_id, spec, env, sandbox, out);
        r->binds = NULL;
        r->nbinds = 0;
        ran = 1;
    }
    for (size_t i = 0; binds && i < nin; i++) {
        fk_bind_release(&binds[i]); /* the task's mounts hold the files now; its sandbox keeps the mount points */
    }
    free(binds);
    fk_staged *rest = calloc(1, sizeof *rest);
    if (!rest) {
        abort();
    }
    memcpy(rest->sandbox, sandbox, sizeof sandbox);
    rest->ran = ran;
    rest->bypass = bypass;
    memcpy(rest->counts, counts, sizeof counts);
    rest->inputs = inputs;
    rest->nin = nin;
    rest->names = names;
    rest->paths = paths;
    rest->env = env;
    rest->nenv = nenv;
    return rest;
}

void fk_staging_finish(fk_staging *st, const fk_spec *spec, fk_staged *rest, fk_exec *out) {
    uint64_t *counts = rest->counts;
    if (rest->ran) {
        const char *dir = spec->workdir.len ? spec->workdir.s : rest->sandbox;
        fk_buf held, archived;
        fk_buf_init(&held);
        fk_buf_init(&archived);
        uint16_t nheld = 0, narchived = 0;
        char *problem = out->status == FK_EXITED && out->exit_code == 0
                        ? save_outputs(st, spec, dir, rest->sandbox, rest->bypass, &counts[7], &held, &nheld, &archived,
                                       &narchived)
                        : NULL;
        if (problem) {
            /* exit 0 is not success while a declared output is missing or unsaved */
            out->status = FK_OUTPUT_FAILED;
            fk_str_free(&out->detail);
            out->detail = fk_str_of(problem);
            free(problem);
            release_held(st->cache, &held, nheld); /* nothing will read them */
            nheld = 0;
        }
        fk_data_stats stats = {counts[0], counts[1], counts[2], counts[3], counts[4], counts[5], counts[6], counts[7]};
        fk_buf b;
        fk_buf_init(&b);
        fk_stats_encode(&stats, &b);
        add_ext(out, FK_EXT_DATA_STATS, 0, &b);
        fk_buf_free(&b);
        if (nheld > 0) { /* HELD = count:u16 (id:str)* */
            add_ext(out, FK_EXT_HELD, nheld, &held);
        }
        if (narchived > 0 && !problem) {
            add_ext(out, FK_EXT_ARCHIVED, narchived, &archived);
        }
        fk_buf_free(&held);
        fk_buf_free(&archived);
    }
    for (size_t i = 0; i < rest->nin; i++) {
        free(rest->paths[i]);
        free(rest->names[i]);
    }
    free(rest->names);
    for (size_t i = 0; i < rest->nenv; i++) {
        free(rest->env[i]);
    }
    free(rest->env);
    free(rest->paths);
    fk_inputs_free(rest->inputs, rest->nin);
    fk_rmtree(rest->sandbox);
    free(rest);
}

void fk_staging_run(fk_staging *st, fk_runner *r, uint64_t task_id, const fk_spec *spec, const fk_hint *hints,
                    size_t nhints, int bypass, fk_exec *out) {
    fk_staged *rest = fk_staging_begin(st, r, task_id, spec, hints, nhints, bypass, out);
    if (rest) {
        fk_staging_finish(st, spec, rest, out);
    }
}
