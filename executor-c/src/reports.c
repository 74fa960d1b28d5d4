/* What goes back to the dispatcher besides the session itself: results with their credits (and
 * the prefetch that sizes them) and the data cache's changes. Main thread. */
#include "executor_state.h"
#include "runner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ex_reports_init(ex *e) {
    e->reports.linger_until = -1;
}

int ex_summary_due(const ex *e, int64_t now) {
    return now >= e->reports.next_summary;
}

void ex_send_full_summary(ex *e) {
    e->reports.next_summary = fk_mono_millis() + CACHE_SUMMARY_MS;
    ex_free_changes(ex_take_changes(e)); /* the summary supersedes them */
    fk_msg m;
    memset(&m, 0, sizeof m);
    m.type = FK_CACHE_UPDATE;
    m.u.cache.full = 1;
    m.u.cache.nadded = fk_cache_contents(e->cache, &m.u.cache.added);
    ex_send_msg(e, &m);
    fk_cached_free(m.u.cache.added, m.u.cache.nadded);
}

/* A change and its place in arrival order. */
typedef struct {
    change *c;
    size_t at;
} ordered;

/* By id, then by arrival: of one id's changes, the last comes last. */
static int by_id_then_arrival(const void *a, const void *b) {
    const ordered *x = a, *y = b;
    int c = strcmp(x->c->id, y->c->id);
    return c ? c : (x->at > y->at) - (x->at < y->at);
}

int64_t ex_flush_cache_changes(ex *e, int64_t now, int force) {
    pthread_mutex_lock(&e->queue.lock);
    int64_t due = e->queue.chead ? e->queue.changes_due : -1;
    pthread_mutex_unlock(&e->queue.lock);
    if (due < 0 || (!force && now < due)) {
        return due;
    }
    change *c = ex_take_changes(e);
    if (!c) {
        return -1;
    }
    /* coalesce: only each id's last change counts (sorted, not each against each: a gather's
     * batch holds a thousand) */
    size_t n = 0;
    for (change *k = c; k; k = k->next) {
        n++;
    }
    ordered *order = calloc(n, sizeof *order);
    if (!order) {
        abort();
    }
    n = 0;
    for (change *k = c; k; k = k->next, n++) {
        order[n] = (ordered){k, n};
    }
    qsort(order, n, sizeof *order, by_id_then_arrival);
    fk_msg m;
    memset(&m, 0, sizeof m);
    m.type = FK_CACHE_UPDATE;
    m.u.cache.added = calloc(n, sizeof(fk_cached));
    m.u.cache.removed = calloc(n, sizeof(fk_str));
    if (!m.u.cache.added || !m.u.cache.removed) {
        abort();
    }
    for (size_t i = 0; i < n; i++) {
        change *k = order[i].c;
        if (i + 1 < n && strcmp(order[i + 1].c->id, k->id) == 0) {
            continue; /* a later change of the same id follows */
        }
        if (k->size >= 0) {
            m.u.cache.added[m.u.cache.nadded].id = fk_str_of(k->id);
            m.u.cache.added[m.u.cache.nadded++].size = k->size;
        } else {
            m.u.cache.removed[m.u.cache.nremoved++] = fk_str_of(k->id);
        }
    }
    free(order);
    ex_free_changes(c);
    if (ex_live(e)) {
        ex_send_msg(e, &m);
    }
    fk_msg_free(&m);
    return -1;
}

/* Results wait for company until half the prefetch has finished (ex_results_ready). */
static size_t flush_threshold(int granted) {
    return granted / 2 > 1 ? (size_t)(granted / 2) : 1;
}

void ex_grant(ex *e, int granted) {
    e->reports.granted = granted;
    ex_set_flush_at(e, flush_threshold(granted));
}

/* Extra credits granted when registering. */
int ex_prefetch_initial(const ex *e) {
    return e->cfg->prefetch == FK_PREFETCH_AUTO ? 0 : e->cfg->prefetch;
}

/* The extra credits wanted now (see FK_PREFETCH_AUTO). */
static int prefetch_target(const ex *e) {
    if (e->cfg->prefetch != FK_PREFETCH_AUTO) {
        return e->cfg->prefetch;
    }
    if (e->cache || e->reports.samples < 8 || e->reports.mean_ms >= 100.0) {
        return 0;
    }
    /* about 40 ms of work per slot, 1 to 64: a round trip to the dispatcher with room to spare, and
     * results that linger for company travel in larger frames (each frame costs the dispatcher several
     * wake-ups: see Prefetch.java, which does the same) */
    int per_slot = e->reports.mean_ms <= 40.0 / 64 ? 64 : (int)ceil(40.0 / e->reports.mean_ms);
    per_slot = per_slot < 1 ? 1 : per_slot > 64 ? 64 : per_slot;
    return e->cfg->slots * per_slot;
}

/* Every finished result of the current connection, with their credits (one per core, adjusted by the
 * change in prefetch), in one frame. */
void ex_flush_results(ex *e) {
    done *d = ex_take_done(e);
    size_t n = 0;
    for (done *k = d; k; k = k->next) {
        n++;
    }
    if (n == 0) {
        return;
    }
    fk_msg m;
    memset(&m, 0, sizeof m);
    m.type = FK_RESULT;
    m.u.result.results = calloc(n, sizeof(fk_tresult));
    if (!m.u.result.results) {
        abort();
    }
    int gen = atomic_load(&e->queue.gen);
    int returning = 0; /* a credit per core of each result (a task of N cores took N) */
    while (d) {
        done *next = d->next;
        if (d->gen == gen) {
            fk_tresult *t = &m.u.result.results[m.u.result.n++];
            t->task_id = d->task_id;
            t->attempt = d->attempt;
            t->exec = d->exec;
            returning += (int)d->cores;
            double ms = (double)(d->exec.finished_us - d->exec.started_us) / 1000.0;
            e->reports.samples++;
            e->reports.mean_ms = e->reports.samples == 1 ? ms : e->reports.mean_ms + (ms - e->reports.mean_ms) * 0.1;
        } else {
            fk_exec_free(&d->exec); /* the dispatcher has re-queued it already */
        }
        free(d);
        d = next;
    }
    int delta = prefetch_target(e) - e->reports.granted;
    if (delta < -returning) {
        delta = -returning;
    }
    if (m.u.result.n && ex_live(e)) {
        /* the cache changes pending go first (those of these tasks among them): when the dispatcher
         * learns that a task finished, it knows what the task left in the cache */
        ex_flush_cache_changes(e, 0, 1);
        ex_grant(e, e->reports.granted + delta);
        m.u.result.credits = (uint32_t)(returning + delta);
        ex_send_msg(e, &m);
    }
    fk_msg_free(&m);
}

/* Results go back at once, unless with prefetch a few more may join them soon. */
void ex_results_ready(ex *e, int64_t now) {
    pthread_mutex_lock(&e->queue.lock);
    size_t ndone = e->queue.ndone, queued = e->queue.queued;
    pthread_mutex_unlock(&e->queue.lock);
    if (ndone == 0) {
        return;
    }
    int p = e->reports.granted;
    if (p == 0 || ndone >= flush_threshold(p) || queued == 0) {
        ex_flush_results(e);
        e->reports.linger_until = -1;
    } else if (e->reports.linger_until < 0) {
        e->reports.linger_until = now + RESULT_LINGER_MS;
    } else if (now >= e->reports.linger_until) {
        ex_flush_results(e);
        e->reports.linger_until = -1;
    }
}
