/* The job queue and the slot threads: each slot takes the next job, runs it and queues its result. */
#include "executor_state.h"

#include "affinity.h"

#include "log.h"
#include "worker.h"

#include <errno.h>
#include <sys/eventfd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void ex_wake(ex *e) {
    uint64_t one = 1;
    if (write(e->queue.wake_fd, &one, sizeof one) < 0 && errno != EAGAIN) {
        fk_warn("eventfd write: %s", strerror(errno));
    }
}

void ex_job_free(job *j) {
    free(j->asked);
    fk_spec_free(&j->spec);
    fk_hints_free(j->hints, j->nhints);
    free(j);
}

void ex_finish(ex *e, uint64_t task_id, uint32_t attempt, int gen, uint32_t cores, fk_exec *x) {
    done *d = calloc(1, sizeof *d);
    if (!d) {
        abort();
    }
    d->task_id = task_id;
    d->attempt = attempt;
    d->gen = gen;
    d->cores = cores;
    d->exec = *x;
    pthread_mutex_lock(&e->queue.lock);
    if (e->queue.dtail) {
        e->queue.dtail->next = d;
    } else {
        e->queue.dhead = d;
    }
    e->queue.dtail = d;
    e->queue.ndone++;
    /* The main thread acts on a result only when it starts a linger, fills a frame or is the last
     * one in hand (ex_results_ready); waking it for every other one cost it a poll, two reads
     * and a context switch per task. */
    int wake = e->queue.ndone == 1 || e->queue.ndone >= e->queue.flush_at || e->queue.queued == 0;
    pthread_mutex_unlock(&e->queue.lock);
    if (wake) {
        ex_wake(e);
    }
}

/* Reports a task that never ran (cancelled while waiting, undecodable): no process, empty streams. */
void ex_finish_unrun(ex *e, uint64_t task_id, uint32_t attempt, int gen, uint32_t cores, uint8_t status,
                     uint8_t flags, const char *why) {
    fk_exec x;
    memset(&x, 0, sizeof x);
    x.status = status;
    x.flags = flags;
    x.exit_code = -1;
    x.started_us = x.finished_us = fk_now_micros();
    x.out = fk_str_dup("", 0);
    x.err = fk_str_dup("", 0);
    x.detail = fk_str_of(why);
    ex_finish(e, task_id, attempt, gen, cores, &x);
}

typedef struct {
    ex *e;
    int slot;
} slot_arg;

/* A finished task whose outputs are being saved on a thread of its own (save_elsewhere). */
typedef struct {
    ex *e;
    job *j;
    fk_staged *rest;
    fk_exec x;
} saving;

static void saved_one(ex *e) {
    pthread_mutex_lock(&e->queue.lock);
    if (--e->queue.saving == 0) {
        pthread_cond_broadcast(&e->queue.saved);
    }
    pthread_mutex_unlock(&e->queue.lock);
}

static void *save_main(void *p) {
    saving *s = p;
    fk_staging_finish(&s->e->staging, &s->j->spec, s->rest, &s->x);
    ex_finish(s->e, s->j->task_id, s->j->attempt, s->j->gen, s->j->cores, &s->x);
    saved_one(s->e); /* after finish: counted in ndone before it stops counting as saving */
    ex_job_free(s->j);
    free(s);
    return NULL;
}

/* Hands what is left of a finished job (its outputs to save, each forced to disk, and its sandbox
 * to remove) to a thread of its own, which reports it when done, so that the slot takes its next job
 * meanwhile: a task's outputs waiting for the disk (an fsync takes milliseconds per megabyte) no
 * longer hold a slot. At most one such thread per slot at a time; 1 if handed over, 0 if the slot
 * must do it itself (none free, stopping, or no thread could be made). */
static int save_elsewhere(ex *e, job *j, fk_staged *rest, fk_exec *x) {
    pthread_mutex_lock(&e->queue.lock);
    int room = !e->queue.stopping && e->queue.saving < (size_t)e->queue.nthreads;
    if (room) {
        e->queue.saving++; /* before the job stops counting as running (ex_holding) */
    }
    pthread_mutex_unlock(&e->queue.lock);
    if (!room) {
        return 0;
    }
    saving *s = malloc(sizeof *s);
    if (!s) {
        abort();
    }
    *s = (saving){.e = e, .j = j, .rest = rest, .x = *x};
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    int made = pthread_create(&t, &attr, save_main, s) == 0;
    pthread_attr_destroy(&attr);
    if (!made) {
        free(s);
        saved_one(e);
    }
    return made;
}

/* Under the lock: takes the queue's head if its cores are free (FIFO: a job of several cores is
 * not overtaken here, so it cannot starve; the dispatcher keeps smaller work away meanwhile), and
 * claims that many slot indices, lowest first. NULL when the head must wait. */
static job *take_head(ex *e, int slot, int *claimed, int *nclaimed, fk_grant *grant) {
    static const fk_asked none;
    job *j = e->queue.qhead;
    if (!j || (int)j->cores > e->queue.free_cores ||
        (j->asked && !(e->queue.res && fk_resources_free(e->queue.res, j->asked)))) {
        return NULL;
    }
    if (e->queue.res) {
        /* its devices, in its environment (also a task that asks none: it is shown none) */
        fk_resources_take(e->queue.res, j->asked ? j->asked : &none, slot, &j->spec, grant);
    }
    e->queue.qhead = j->next;
    if (!e->queue.qhead) {
        e->queue.qtail = NULL;
    }
    e->queue.queued--;
    e->queue.running++;
    e->queue.free_cores -= (int)j->cores;
    *nclaimed = 0;
    for (int i = 0; i < e->queue.nthreads && *nclaimed < (int)j->cores; i++) {
        if (!e->queue.claimed[i]) {
            e->queue.claimed[i] = 1;
            claimed[(*nclaimed)++] = i;
        }
    }
    return j;
}

static void *slot_main(void *p) {
    slot_arg *a = p;
    ex *e = a->e;
    fk_runner *r = &e->queue.runners[a->slot];
    int a_slot = a->slot;
    fk_affinity_pin_slot(a->slot);
    free(a);
    int *claimed = calloc((size_t)e->queue.nthreads, sizeof(int));
    if (!claimed) {
        abort();
    }
    for (;;) {
        int nclaimed = 0;
        job *j = NULL;
        pthread_mutex_lock(&e->queue.lock);
        fk_grant grant;
        memset(&grant, 0, sizeof grant);
        while (!e->queue.stopping && !(j = take_head(e, a_slot, claimed, &nclaimed, &grant))) {
            pthread_cond_wait(&e->queue.cond, &e->queue.lock);
        }
        if (e->queue.stopping) {
            pthread_mutex_unlock(&e->queue.lock);
            free(claimed);
            return NULL;
        }
        pthread_mutex_unlock(&e->queue.lock);
        /* a task that stated its cores runs on that many CPUs of its own when slots are pinned */
        r->confine = j->declared && fk_affinity_cpus_of(claimed, nclaimed, &r->cpus);
        int cores = (int)j->cores;
        int several = j->cores > 1 || j->asked;
        if (j->gen == atomic_load(&e->queue.gen)) {
            fk_exec x;
            fk_staged *rest = NULL;
            if (fk_staging_needed(&j->spec)) {
                rest = fk_staging_begin(&e->staging, r, j->task_id, &j->spec, j->hints, j->nhints, j->bypass, &x);
            } else {
                fk_run(r, j->task_id, &j->spec, NULL, NULL, &x);
            }
            if (rest && save_elsewhere(e, j, rest, &x)) {
                j = NULL; /* its saving thread reports it and frees it */
            } else {
                if (rest) {
                    fk_staging_finish(&e->staging, &j->spec, rest, &x);
                }
                ex_finish(e, j->task_id, j->attempt, j->gen, j->cores, &x);
            }
        }
        /* after finish (or the hand-over): its result is counted in ndone (or it in saving) before it
         * stops counting as running */
        pthread_mutex_lock(&e->queue.lock);
        e->queue.running--;
        e->queue.free_cores += cores;
        for (int i = 0; i < nclaimed; i++) {
            e->queue.claimed[claimed[i]] = 0;
        }
        if (e->queue.res) {
            fk_resources_give(e->queue.res, &grant);
        }
        if (several) {
            pthread_cond_broadcast(&e->queue.cond); /* room for several waiting jobs */
        }
        pthread_mutex_unlock(&e->queue.lock);
        if (j) {
            ex_job_free(j);
        }
    }
}

/* Appends received jobs (head..tail, added of them) and wakes as many slots. */
void ex_enqueue(ex *e, job *head, job *tail, size_t added) {
    pthread_mutex_lock(&e->queue.lock);
    if (e->queue.qtail) {
        e->queue.qtail->next = head;
    } else {
        e->queue.qhead = head;
    }
    e->queue.qtail = tail;
    e->queue.queued += added;
    if (added == 1) {
        pthread_cond_signal(&e->queue.cond);
    } else {
        pthread_cond_broadcast(&e->queue.cond);
    }
    pthread_mutex_unlock(&e->queue.lock);
}

/* Cancels a task whether it is waiting or running; its result is still reported. */
void ex_cancel_task(ex *e, uint64_t id) {
    pthread_mutex_lock(&e->queue.lock);
    job *prev = NULL, *j = e->queue.qhead;
    while (j && j->task_id != id) {
        prev = j;
        j = j->next;
    }
    if (j) {
        if (prev) {
            prev->next = j->next;
        } else {
            e->queue.qhead = j->next;
        }
        if (e->queue.qtail == j) {
            e->queue.qtail = prev;
        }
        e->queue.queued--;
        pthread_cond_broadcast(&e->queue.cond); /* it may have held up the jobs behind it */
    }
    pthread_mutex_unlock(&e->queue.lock);
    if (j) {
        ex_finish_unrun(e, j->task_id, j->attempt, j->gen, j->cores, FK_CANCELLED, 0, "cancelled before it started");
        ex_job_free(j);
        return;
    }
    for (int i = 0; i < e->queue.nthreads; i++) {
        if (fk_runner_cancel(&e->queue.runners[i], id)) {
            return;
        }
    }
}

/* The finished results not yet sent, taken (the caller frees them). */
done *ex_take_done(ex *e) {
    pthread_mutex_lock(&e->queue.lock);
    done *d = e->queue.dhead;
    e->queue.dhead = e->queue.dtail = NULL;
    e->queue.ndone = 0;
    pthread_mutex_unlock(&e->queue.lock);
    return d;
}

/* How many finished results wake the main thread (the prefetch granted sizes it). */
void ex_set_flush_at(ex *e, size_t n) {
    pthread_mutex_lock(&e->queue.lock);
    e->queue.flush_at = n;
    pthread_mutex_unlock(&e->queue.lock);
}

/* The queue before the slots start: its lock, and the eventfd that wakes the main thread. 0, or -1. */
int ex_queue_init(ex *e) {
    pthread_mutex_init(&e->queue.lock, NULL);
    pthread_cond_init(&e->queue.cond, NULL);
    pthread_cond_init(&e->queue.saved, NULL);
    e->queue.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    return e->queue.wake_fd < 0 ? -1 : 0;
}

void ex_queue_destroy(ex *e) {
    close(e->queue.wake_fd);
    pthread_mutex_destroy(&e->queue.lock);
    pthread_cond_destroy(&e->queue.cond);
    pthread_cond_destroy(&e->queue.saved);
}

/* Drops every waiting job and kills every running one: the connection they came on is gone. */
void ex_cancel_all(ex *e) {
    pthread_mutex_lock(&e->queue.lock);
    job *j = e->queue.qhead;
    e->queue.qhead = e->queue.qtail = NULL;
    e->queue.queued = 0;
    done *d = e->queue.dhead;
    e->queue.dhead = e->queue.dtail = NULL;
    e->queue.ndone = 0;
    pthread_mutex_unlock(&e->queue.lock);
    while (j) {
        job *next = j->next;
        ex_job_free(j);
        j = next;
    }
    while (d) {
        done *next = d->next;
        fk_exec_free(&d->exec);
        free(d);
        d = next;
    }
    for (int i = 0; i < e->queue.nthreads; i++) {
        fk_runner_kill(&e->queue.runners[i]);
    }
}

/* Starts one thread per slot (none with --no-exec: nothing runs). */
void ex_start_slots(ex *e) {
    const fk_config *cfg = e->cfg;
    if (cfg->no_exec) {
        return;
    }
    e->queue.nthreads = cfg->slots;
    e->queue.free_cores = cfg->slots;
    e->queue.res = cfg->resources && cfg->resources->n ? cfg->resources : NULL;
    e->queue.runners = calloc((size_t)cfg->slots, sizeof(fk_runner));
    e->queue.threads = calloc((size_t)cfg->slots, sizeof(pthread_t));
    e->queue.claimed = calloc((size_t)cfg->slots, 1);
    if (!e->queue.runners || !e->queue.threads || !e->queue.claimed) {
        abort();
    }
    for (int i = 0; i < cfg->slots; i++) {
        fk_runner_init(&e->queue.runners[i], cfg->output_cap, cfg->workdir);
        e->queue.runners[i].worker_max_tasks = cfg->worker_max_tasks;
        e->queue.runners[i].worker_max_mib = cfg->worker_max_mib;
    }
    int cpus;
    if (fk_affinity_init(cfg->pin_slots, cfg->slots, &cpus)) {
        fk_info("each slot thread keeps to one of the executor's %d CPUs (--pin-slots); tasks may use all of them",
                cpus);
    }
    for (int i = 0; i < cfg->slots; i++) {
        slot_arg *a = malloc(sizeof *a);
        if (!a) {
            abort();
        }
        a->e = e;
        a->slot = i;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 256 * 1024);
        if (pthread_create(&e->queue.threads[i], &attr, slot_main, a) != 0) {
            abort();
        }
        pthread_attr_destroy(&attr);
    }
}

/* Stops the slots: nothing more is taken, what runs is killed, the threads are joined. */
void ex_stop_slots(ex *e) {
    pthread_mutex_lock(&e->queue.lock);
    e->queue.stopping = 1;
    pthread_cond_broadcast(&e->queue.cond);
    pthread_mutex_unlock(&e->queue.lock);
    for (int i = 0; i < e->queue.nthreads; i++) {
        fk_runner_close(&e->queue.runners[i]);
    }
    ex_cancel_all(e);
    for (int i = 0; i < e->queue.nthreads; i++) {
        pthread_join(e->queue.threads[i], NULL);
    }
    /* outputs being saved are saved: the task ran, and what it made is the user's (its result may
     * not be sent) */
    pthread_mutex_lock(&e->queue.lock);
    while (e->queue.saving > 0) {
        pthread_cond_wait(&e->queue.saved, &e->queue.lock);
    }
    pthread_mutex_unlock(&e->queue.lock);
    ex_cancel_all(e); /* anything a slot finished while stopping */
    for (int i = 0; i < e->queue.nthreads; i++) {
        fk_worker_stop(&e->queue.runners[i]);
        fk_runner_destroy(&e->queue.runners[i]);
    }
    free(e->queue.runners);
    free(e->queue.threads);
    free(e->queue.claimed);
    e->queue.runners = NULL;
    e->queue.threads = NULL;
    e->queue.claimed = NULL;
    e->queue.nthreads = 0;
}

/* Tasks the executor holds: waiting, running, saving their outputs, or finished and not yet
 * reported (--idle-exit). */
size_t ex_holding(ex *e) {
    pthread_mutex_lock(&e->queue.lock);
    size_t n = e->queue.queued + e->queue.running + e->queue.saving + e->queue.ndone;
    pthread_mutex_unlock(&e->queue.lock);
    return n;
}

/* The cache changes not yet reported: queue state (the cache tells on slot threads), kept under its lock. */
void ex_cache_changed(void *ctx, const char *id, int64_t size) {
    ex *e = ctx;
    change *c = calloc(1, sizeof *c);
    if (!c || !(c->id = strdup(id))) {
        abort();
    }
    c->size = size;
    pthread_mutex_lock(&e->queue.lock);
    int first = e->queue.ctail == NULL;
    if (e->queue.ctail) {
        e->queue.ctail->next = c;
    } else {
        e->queue.chead = c;
        e->queue.changes_due = fk_mono_millis() + CACHE_CHANGES_MS;
    }
    e->queue.ctail = c;
    pthread_mutex_unlock(&e->queue.lock);
    if (first) { /* the main thread learns when to report them; the rest wait with them */
        ex_wake(e);
    }
}

change *ex_take_changes(ex *e) {
    pthread_mutex_lock(&e->queue.lock);
    change *c = e->queue.chead;
    e->queue.chead = e->queue.ctail = NULL;
    pthread_mutex_unlock(&e->queue.lock);
    return c;
}

void ex_free_changes(change *c) {
    while (c) {
        change *next = c->next;
        free(c->id);
        free(c);
        c = next;
    }
}
