/*
 * The C executor's state (not an interface: executor.h is), in parts with one owner each, which
 * alone writes its fields (tests/check_layout.py checks it): the job queue shared with the slot
 * threads under its lock, its results and the cache's changes (ex_queue: slots.c), the connection
 * (ex_session: session.c, which hands each message to the callback it was given) and the pacing of
 * reports (ex_reports: reports.c), both the main thread's, which also runs the loop (the rest of
 * ex: executor.c). The others go through the owner's functions declared below.
 */
#ifndef FK_EXECUTOR_STATE_H
#define FK_EXECUTOR_STATE_H

#include "cache.h"
#include "conn.h"
#include "executor.h"
#include "peer.h"
#include "proto.h"
#include "resources.h"
#include "runner.h"
#include "staging.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

/* Until WELCOME says otherwise (its heartbeatMillis; 0 = heartbeats off). */
#define HEARTBEAT_MS 5000
#define BACKOFF_FIRST_MS 100
#define BACKOFF_MAX_MS 5000
#define CONNECT_TIMEOUT_MS 10000
/* With prefetch: results wait for company this long at most while the slots still have work. */
#define RESULT_LINGER_MS 20
/* Cache changes wait for company this long at most: a gather that caches a thousand objects is
 * reported in a few messages, not one per object (each a wake-up here and a message to handle there). */
#define CACHE_CHANGES_MS 10
/* The full cache summary that repairs any drift in the dispatcher's index. */
#define CACHE_SUMMARY_MS 60000

typedef struct job {
    struct job *next;
    uint64_t task_id;
    uint32_t attempt;
    int gen;
    fk_spec spec;
    fk_hint *hints;
    size_t nhints;
    int bypass;
    uint32_t cores;   /* slots it takes at once (RESOURCES; 1 when it states none) */
    int declared;     /* it stated its cores: with pinned slots it gets that many CPUs of its own */
    fk_asked *asked;  /* the named resources it asks for (NAMED_RESOURCES), or NULL: most tasks */
} job;

typedef struct done {
    struct done *next;
    uint64_t task_id;
    uint32_t attempt;
    int gen;
    uint32_t cores; /* the credits its result returns */
    fk_exec exec;
} done;

typedef struct change {
    struct change *next;
    char *id;
    int64_t size; /* -1: removed */
} change;

/* The job queue and the slot threads: the one part shared between threads (slots.c). Every field
 * is read and written under lock, except gen (atomic) and what is set before the threads start. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    job *qhead, *qtail; /* received, not yet started */
    size_t queued;
    done *dhead, *dtail; /* finished, not yet sent */
    size_t ndone;
    size_t flush_at; /* ndone at which the main thread flushes results (ex_grant) */
    size_t running; /* taken by a slot, not yet finished */
    size_t saving; /* its process done, its outputs being saved on a thread of its own (slots.c) */
    pthread_cond_t saved; /* saving fell to 0 */
    int free_cores; /* slots not taken by a running job (a job of N cores takes N) */
    unsigned char *claimed; /* per slot index: taken by a running job (its CPUs when pinned) */
    change *chead, *ctail; /* cache changes not yet reported */
    int64_t changes_due; /* with changes pending: when they are reported (the first one's time + CACHE_CHANGES_MS) */
    int stopping;
    atomic_int gen; /* counts connections: results of an earlier one are dropped */
    int wake_fd; /* written by a slot thread to wake the main thread's poll */
    fk_resources *res; /* the named resources offered, or NULL; who holds which (resources.h) */
    fk_runner *runners;
    pthread_t *threads;
    int nthreads;
} ex_queue;

/* The connection to the dispatcher (session.c): main thread only. */
typedef struct ex ex;
typedef struct ex_session {
    void (*on_message)(ex *e, fk_msg *m); /* each message the dispatcher sends, in order */
    fk_conn conn;
    fk_tls *tls;
    int64_t connect_deadline;
    uint32_t max_frame;
    int registered_once;
    int registered;
    int64_t last_recv, last_send;
    int heartbeat_ms;
    int64_t disconnected_at; /* -1 when connected */
    int attempt;
    int64_t next_dial;
    int reconnects;
    char last_dial_error[512]; /* why the last dial failed, while the first connection is awaited */
} ex_session;

/* When results and cache reports go back (reports.c): main thread only. */
typedef struct {
    int64_t linger_until;
    int64_t next_summary;
    /* prefetch (set with ex_grant): extra credits granted now, and the tasks' running mean length */
    int granted;
    double mean_ms;
    uint64_t samples;
} ex_reports;

/* The executor: its configuration and local parts (cache, peer server, staging, spool), and the
 * three parts above, each with one owner. */
struct ex {
    const fk_config *cfg;
    ex_queue queue;
    ex_session session;
    ex_reports reports;
    fk_cache *cache;
    fk_peer_server *peer;
    fk_staging staging;
    char spool[256];
    char hostname[256];
    int terminated;
    int exit_status;
    char exit_why[700]; /* why it stopped, for the last line it prints */
    int64_t idle_since; /* --idle-exit: when the executor last held no task (main thread) */
};

/* slots.c: the job queue and the slot threads */
void ex_wake(ex *e);
void ex_job_free(job *j);
void ex_finish(ex *e, uint64_t task_id, uint32_t attempt, int gen, uint32_t cores, fk_exec *x);
void ex_finish_unrun(ex *e, uint64_t task_id, uint32_t attempt, int gen, uint32_t cores, uint8_t status,
                     uint8_t flags, const char *why);
void ex_enqueue(ex *e, job *head, job *tail, size_t added);
void ex_cancel_task(ex *e, uint64_t id);
void ex_cancel_all(ex *e);
void ex_start_slots(ex *e);
int ex_queue_init(ex *e);
void ex_queue_destroy(ex *e);
done *ex_take_done(ex *e);
void ex_set_flush_at(ex *e, size_t n);
void ex_stop_slots(ex *e);
size_t ex_holding(ex *e);

/* reports.c: results and cache changes back to the dispatcher */
void ex_cache_changed(void *ctx, const char *id, int64_t size); /* slots.c: queue state */
change *ex_take_changes(ex *e);                                 /* slots.c */
void ex_free_changes(change *c);                                /* slots.c */
void ex_reports_init(ex *e);
/* Whether the full cache summary is due (it repairs any drift in the dispatcher's index). */
int ex_summary_due(const ex *e, int64_t now);
/* Sends every object the cache holds, superseding the changes pending; the next is due in CACHE_SUMMARY_MS. */
void ex_send_full_summary(ex *e);
/* Reports the cache changes pending once they are due (or now, with force); returns when the next are due, -1 for none. */
int64_t ex_flush_cache_changes(ex *e, int64_t now, int force);
/* Sets the extra credits granted (main thread) and the result count that wakes the main thread. */
void ex_grant(ex *e, int granted);
int ex_prefetch_initial(const ex *e);
void ex_flush_results(ex *e);
void ex_results_ready(ex *e, int64_t now);

/* session.c: the connection to the dispatcher */
void ex_session_init(ex *e, void (*on_message)(ex *e, fk_msg *m));
int ex_session_open(ex *e, char *err, size_t errlen);
void ex_session_destroy(ex *e);
/* Whether a dial is due now (it is then no longer pending). */
int ex_dial_due(ex *e, int64_t now);

/* executor.c: what the dispatcher's messages do; the callback it gives the session (which never calls up) */
void ex_on_message(ex *e, fk_msg *m);
/* Stops the executor (the first reason given is the one it exits with). */
void ex_terminate(ex *e, int status, const char *why);
/* The executor holds no task from now (--idle-exit counts from it). */
void ex_idle_from(ex *e, int64_t now);
void ex_send_msg(ex *e, const fk_msg *m);
int ex_live(const ex *e);
void ex_on_welcome(ex *e, const fk_msg *w);
void ex_close_conn(ex *e);
void ex_schedule_dial(ex *e);
void ex_first_dial_failed(ex *e, const char *why);
void ex_disconnected(ex *e, const char *why);
int ex_dial(ex *e, char *why, size_t whylen);
void ex_progressed(ex *e);
void ex_read_frames(ex *e);
void ex_write_out(ex *e);


#endif
