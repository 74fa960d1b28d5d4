#include "executor.h"

#include "cache.h"
#include "conn.h"
#include "fsutil.h"
#include "log.h"
#include "peer.h"
#include "proto.h"
#include "runner.h"
#include "staging.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* Until WELCOME says otherwise (its heartbeatMillis; 0 = heartbeats off). */
#define HEARTBEAT_MS 5000
#define BACKOFF_FIRST_MS 100
#define BACKOFF_MAX_MS 5000
#define CONNECT_TIMEOUT_MS 10000
/* With prefetch: results wait for company this long at most while the slots still have work. */
#define RESULT_LINGER_MS 10
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
} job;

typedef struct done {
    struct done *next;
    uint64_t task_id;
    uint32_t attempt;
    int gen;
    fk_exec exec;
} done;

typedef struct change {
    struct change *next;
    char *id;
    int64_t size; /* -1: removed */
} change;

typedef struct {
    const fk_config *cfg;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    job *qhead, *qtail; /* received, not yet started */
    size_t queued;
    done *dhead, *dtail; /* finished, not yet sent */
    size_t ndone;
    size_t running; /* taken by a slot, not yet finished */
    change *chead, *ctail; /* cache changes not yet reported */
    int stopping;
    atomic_int gen; /* counts connections: results of an earlier one are dropped */
    int wake_fd;
    fk_runner *runners;
    pthread_t *threads;
    int nthreads;
    fk_cache *cache;
    fk_peer_server *peer;
    fk_staging staging;
    char spool[256];
    char hostname[256];

    /* the connection: main thread only */
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
    int64_t linger_until;
    int64_t next_summary;
    int reconnects;
    int terminated;
    int exit_status;
    char exit_why[700]; /* why it stopped, for the last line it prints */
    int64_t idle_since; /* --idle-exit: when the executor last held no task (main thread) */
    /* prefetch (main thread): extra credits granted now, and the tasks' running mean length */
    int granted;
    double mean_ms;
    uint64_t samples;
} ex;

static volatile sig_atomic_t signalled;
static int signal_wake_fd = -1;

static void on_signal(int sig) {
    signalled = sig;
    uint64_t one = 1;
    if (signal_wake_fd >= 0 && write(signal_wake_fd, &one, sizeof one) < 0) {
        /* nothing to do in a handler */
    }
}

static void wake(ex *e) {
    uint64_t one = 1;
    if (write(e->wake_fd, &one, sizeof one) < 0 && errno != EAGAIN) {
        fk_warn("eventfd write: %s", strerror(errno));
    }
}

static void job_free(job *j) {
    fk_spec_free(&j->spec);
    fk_hints_free(j->hints, j->nhints);
    free(j);
}

/* ---- slots ---- */

static void finish(ex *e, uint64_t task_id, uint32_t attempt, int gen, fk_exec *x) {
    done *d = calloc(1, sizeof *d);
    if (!d) {
        abort();
    }
    d->task_id = task_id;
    d->attempt = attempt;
    d->gen = gen;
    d->exec = *x;
    pthread_mutex_lock(&e->lock);
    if (e->dtail) {
        e->dtail->next = d;
    } else {
        e->dhead = d;
    }
    e->dtail = d;
    e->ndone++;
    pthread_mutex_unlock(&e->lock);
    wake(e);
}

typedef struct {
    ex *e;
    int slot;
} slot_arg;

static void *slot_main(void *p) {
    slot_arg *a = p;
    ex *e = a->e;
    fk_runner *r = &e->runners[a->slot];
    free(a);
    for (;;) {
        pthread_mutex_lock(&e->lock);
        while (!e->qhead && !e->stopping) {
            pthread_cond_wait(&e->cond, &e->lock);
        }
        if (e->stopping) {
            pthread_mutex_unlock(&e->lock);
            return NULL;
        }
        job *j = e->qhead;
        e->qhead = j->next;
        if (!e->qhead) {
            e->qtail = NULL;
        }
        e->queued--;
        e->running++;
        pthread_mutex_unlock(&e->lock);
        if (j->gen == atomic_load(&e->gen)) {
            fk_exec x;
            if (fk_staging_needed(&j->spec)) {
                fk_staging_run(&e->staging, r, j->task_id, &j->spec, j->hints, j->nhints, j->bypass, &x);
            } else {
                fk_run(r, j->task_id, &j->spec, NULL, NULL, &x);
            }
            finish(e, j->task_id, j->attempt, j->gen, &x);
        }
        /* after finish: its result is counted in ndone before it stops counting as running */
        pthread_mutex_lock(&e->lock);
        e->running--;
        pthread_mutex_unlock(&e->lock);
        job_free(j);
    }
}

/* Drops every waiting job and kills every running one: the connection they came on is gone. */
static void cancel_all(ex *e) {
    pthread_mutex_lock(&e->lock);
    job *j = e->qhead;
    e->qhead = e->qtail = NULL;
    e->queued = 0;
    done *d = e->dhead;
    e->dhead = e->dtail = NULL;
    e->ndone = 0;
    pthread_mutex_unlock(&e->lock);
    while (j) {
        job *next = j->next;
        job_free(j);
        j = next;
    }
    while (d) {
        done *next = d->next;
        fk_exec_free(&d->exec);
        free(d);
        d = next;
    }
    for (int i = 0; i < e->nthreads; i++) {
        fk_runner_kill(&e->runners[i]);
    }
}

/* ---- cache reports ---- */

static void cache_changed(void *ctx, const char *id, int64_t size) {
    ex *e = ctx;
    change *c = calloc(1, sizeof *c);
    if (!c || !(c->id = strdup(id))) {
        abort();
    }
    c->size = size;
    pthread_mutex_lock(&e->lock);
    if (e->ctail) {
        e->ctail->next = c;
    } else {
        e->chead = c;
    }
    e->ctail = c;
    pthread_mutex_unlock(&e->lock);
    wake(e);
}

static change *take_changes(ex *e) {
    pthread_mutex_lock(&e->lock);
    change *c = e->chead;
    e->chead = e->ctail = NULL;
    pthread_mutex_unlock(&e->lock);
    return c;
}

static void free_changes(change *c) {
    while (c) {
        change *next = c->next;
        free(c->id);
        free(c);
        c = next;
    }
}

/* ---- the connection ---- */

static void send_msg(ex *e, const fk_msg *m) {
    fk_encode(m, &e->conn.out);
}

/* Whether a registration is live: messages sent now reach this connection's dispatcher. */
static int live(const ex *e) {
    return fk_conn_open(&e->conn) && e->registered;
}

static void send_full_summary(ex *e) {
    free_changes(take_changes(e)); /* the summary supersedes them */
    fk_msg m;
    memset(&m, 0, sizeof m);
    m.type = FK_CACHE_UPDATE;
    m.u.cache.full = 1;
    m.u.cache.nadded = fk_cache_contents(e->cache, &m.u.cache.added);
    send_msg(e, &m);
    fk_cached_free(m.u.cache.added, m.u.cache.nadded);
}

static void flush_cache_changes(ex *e) {
    change *c = take_changes(e);
    if (!c) {
        return;
    }
    /* coalesce: only each id's last change counts */
    size_t n = 0;
    for (change *k = c; k; k = k->next) {
        n++;
    }
    fk_msg m;
    memset(&m, 0, sizeof m);
    m.type = FK_CACHE_UPDATE;
    m.u.cache.added = calloc(n, sizeof(fk_cached));
    m.u.cache.removed = calloc(n, sizeof(fk_str));
    if (!m.u.cache.added || !m.u.cache.removed) {
        abort();
    }
    for (change *k = c; k; k = k->next) {
        int superseded = 0;
        for (change *later = k->next; later && !superseded; later = later->next) {
            superseded = strcmp(later->id, k->id) == 0;
        }
        if (superseded) {
            continue;
        }
        if (k->size >= 0) {
            m.u.cache.added[m.u.cache.nadded].id = fk_str_of(k->id);
            m.u.cache.added[m.u.cache.nadded++].size = k->size;
        } else {
            m.u.cache.removed[m.u.cache.nremoved++] = fk_str_of(k->id);
        }
    }
    free_changes(c);
    if (live(e)) {
        send_msg(e, &m);
    }
    fk_msg_free(&m);
}

/* Extra credits granted when registering. */
static int prefetch_initial(const ex *e) {
    return e->cfg->prefetch == FK_PREFETCH_AUTO ? 0 : e->cfg->prefetch;
}

/* The extra credits wanted now (see FK_PREFETCH_AUTO). */
static int prefetch_target(const ex *e) {
    if (e->cfg->prefetch != FK_PREFETCH_AUTO) {
        return e->cfg->prefetch;
    }
    if (e->cache || e->samples < 8 || e->mean_ms >= 100.0) {
        return 0;
    }
    /* enough per slot to cover a round trip to the dispatcher (4 ms assumed), 1 to 8 */
    int per_slot = e->mean_ms <= 0.5 ? 8 : (int)ceil(4.0 / e->mean_ms);
    per_slot = per_slot < 1 ? 1 : per_slot > 8 ? 8 : per_slot;
    return e->cfg->slots * per_slot;
}

/* Every finished result of the current connection, with as many credits (adjusted by the change in
 * prefetch), in one frame. */
static void flush_results(ex *e) {
    pthread_mutex_lock(&e->lock);
    done *d = e->dhead;
    e->dhead = e->dtail = NULL;
    e->ndone = 0;
    pthread_mutex_unlock(&e->lock);
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
    int gen = atomic_load(&e->gen);
    while (d) {
        done *next = d->next;
        if (d->gen == gen) {
            fk_tresult *t = &m.u.result.results[m.u.result.n++];
            t->task_id = d->task_id;
            t->attempt = d->attempt;
            t->exec = d->exec;
            double ms = (double)(d->exec.finished_us - d->exec.started_us) / 1000.0;
            e->samples++;
            e->mean_ms = e->samples == 1 ? ms : e->mean_ms + (ms - e->mean_ms) * 0.1;
        } else {
            fk_exec_free(&d->exec); /* the dispatcher has re-queued it already */
        }
        free(d);
        d = next;
    }
    int delta = prefetch_target(e) - e->granted;
    if (delta < -(int)m.u.result.n) {
        delta = -(int)m.u.result.n;
    }
    if (m.u.result.n && live(e)) {
        e->granted += delta;
        m.u.result.credits = (uint32_t)((int)m.u.result.n + delta);
        send_msg(e, &m);
    }
    fk_msg_free(&m);
}

static void on_welcome(ex *e, const fk_msg *w) {
    const fk_config *c = e->cfg;
    e->max_frame = w->u.welcome.max_frame ? w->u.welcome.max_frame : FK_MAX_FRAME;
    /* the dispatcher's interval, whatever it is: 0 means no heartbeats either way (docs/protocol.md) */
    e->heartbeat_ms = w->u.welcome.heartbeat_ms > INT32_MAX / 4 ? INT32_MAX / 4 : (int)w->u.welcome.heartbeat_ms;
    char pid[32], prefetch[32], port[32];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    if (c->prefetch == FK_PREFETCH_AUTO) {
        snprintf(prefetch, sizeof prefetch, "auto");
    } else {
        snprintf(prefetch, sizeof prefetch, "%d", c->prefetch);
    }
    fk_kv attrs[6];
    size_t na = 0;
    attrs[na].key = fk_str_of("impl");
    attrs[na++].value = fk_str_of("c");
    attrs[na].key = fk_str_of("pid");
    attrs[na++].value = fk_str_of(pid);
    attrs[na].key = fk_str_of("runner");
    attrs[na++].value = fk_str_of(c->no_exec ? "no-exec" : "vfork");
    attrs[na].key = fk_str_of("prefetch");
    attrs[na++].value = fk_str_of(prefetch);
    if (e->peer) {
        snprintf(port, sizeof port, "%d", fk_peer_port(e->peer));
        attrs[na].key = fk_str_of("cachePort");
        attrs[na++].value = fk_str_of(port);
        if (c->cache_host) {
            attrs[na].key = fk_str_of("cacheHost");
            attrs[na++].value = fk_str_of(c->cache_host);
        }
    }
    fk_msg m;
    memset(&m, 0, sizeof m);
    m.type = FK_REGISTER;
    m.u.reg.id = fk_str_of(c->id);
    m.u.reg.host = fk_str_of(e->hostname);
    m.u.reg.slots = (uint32_t)c->slots;
    m.u.reg.flags = c->no_exec ? FK_REGISTER_NO_EXEC : 0;
    m.u.reg.attrs.n = na;
    m.u.reg.attrs.items = attrs;
    send_msg(e, &m);
    fk_str_free(&m.u.reg.id);
    fk_str_free(&m.u.reg.host);
    for (size_t i = 0; i < na; i++) {
        fk_str_free(&attrs[i].key);
        fk_str_free(&attrs[i].value);
    }
    e->registered = 1;
    e->idle_since = fk_mono_millis();
    if (e->cache) {
        send_full_summary(e); /* a new dispatcher knows nothing yet */
        e->next_summary = fk_mono_millis() + CACHE_SUMMARY_MS;
    }
    memset(&m, 0, sizeof m);
    m.type = FK_CREDIT;
    e->granted = prefetch_initial(e);
    m.u.credit.credits = (uint32_t)(c->slots + e->granted);
    send_msg(e, &m);
    if (e->disconnected_at >= 0) {
        e->reconnects++;
        fk_info("registered again with %s:%d after %lld ms", c->host, c->port,
                (long long)(fk_mono_millis() - e->disconnected_at));
        e->disconnected_at = -1;
    } else if (!e->registered_once) {
        if (e->cache) {
            fk_info("registered with %s:%d (%d slots, %s, %lld MiB LRU cache served on port %d)", c->host, c->port,
                    c->slots, c->no_exec ? "NO-EXEC benchmark mode: tasks are not run" : "processes via vfork + exec",
                    (long long)(c->cache_size >> 20), fk_peer_port(e->peer));
        } else {
            fk_info("registered with %s:%d (%d slots, %s)", c->host, c->port, c->slots,
                    c->no_exec ? "NO-EXEC benchmark mode: tasks are not run" : "processes via vfork + exec");
        }
    }
    e->registered_once = 1;
}

static void reject(fk_msg *r, const fk_dtask *t, uint8_t status, const char *why) {
    fk_tresult *x = &r->u.result.results[r->u.result.n++];
    x->task_id = t->task_id;
    x->attempt = t->attempt;
    memset(&x->exec, 0, sizeof x->exec);
    x->exec.status = status;
    x->exec.exit_code = status == FK_EXITED ? 0 : -1;
    x->exec.started_us = x->exec.finished_us = fk_now_micros();
    x->exec.out = fk_str_dup("", 0);
    x->exec.err = fk_str_dup("", 0);
    x->exec.detail = fk_str_of(why);
}

static void on_dispatch(ex *e, fk_msg *m) {
    size_t n = m->u.dispatch.n;
    if (e->stopping || e->cfg->no_exec) {
        /* leaving: refuse, so the dispatcher sends them elsewhere at once; or benchmark mode:
         * complete everything at once, in one RESULT frame */
        fk_msg r;
        memset(&r, 0, sizeof r);
        r.type = FK_RESULT;
        r.u.result.results = calloc(n, sizeof(fk_tresult));
        if (!r.u.result.results) {
            abort();
        }
        for (size_t i = 0; i < n; i++) {
            if (e->stopping) {
                reject(&r, &m->u.dispatch.tasks[i], FK_REJECTED, "executor is shutting down");
            } else {
                reject(&r, &m->u.dispatch.tasks[i], FK_EXITED, "");
                r.u.result.results[i].exec.flags = FK_FLAG_NO_EXEC;
            }
        }
        r.u.result.credits = e->stopping ? 0 : (uint32_t)n;
        send_msg(e, &r);
        fk_msg_free(&r);
        return;
    }
    int gen = atomic_load(&e->gen);
    job *head = NULL, *tail = NULL;
    size_t added = 0;
    for (size_t i = 0; i < n; i++) {
        fk_dtask *t = &m->u.dispatch.tasks[i];
        job *j = calloc(1, sizeof *j);
        if (!j) {
            abort();
        }
        j->task_id = t->task_id;
        j->attempt = t->attempt;
        j->gen = gen;
        char err[256];
        if (fk_spec_decode((const uint8_t *)t->spec.s, t->spec.len, &j->spec, err, sizeof err) != 0) {
            char why[320];
            snprintf(why, sizeof why, "undecodable task spec: %s", err);
            fk_exec x;
            memset(&x, 0, sizeof x);
            x.status = FK_LAUNCH_FAILED;
            x.exit_code = -1;
            x.started_us = x.finished_us = fk_now_micros();
            x.out = fk_str_dup("", 0);
            x.err = fk_str_dup("", 0);
            x.detail = fk_str_of(why);
            finish(e, t->task_id, t->attempt, gen, &x);
            free(j);
            continue;
        }
        const fk_ext *h = fk_ext_find(&t->ext, FK_EXT_HINTS);
        if (h && fk_hints_decode(&h->value, &j->hints, &j->nhints, err, sizeof err) != 0) {
            fk_warn("ignoring undecodable hints for task %llu: %s", (unsigned long long)t->task_id, err);
            j->hints = NULL;
            j->nhints = 0;
        }
        j->bypass = fk_ext_find(&t->ext, FK_EXT_BYPASS_CACHE) != NULL;
        if (tail) {
            tail->next = j;
        } else {
            head = j;
        }
        tail = j;
        added++;
    }
    if (!head) {
        return;
    }
    pthread_mutex_lock(&e->lock);
    if (e->qtail) {
        e->qtail->next = head;
    } else {
        e->qhead = head;
    }
    e->qtail = tail;
    e->queued += added;
    if (added == 1) {
        pthread_cond_signal(&e->cond);
    } else {
        pthread_cond_broadcast(&e->cond);
    }
    pthread_mutex_unlock(&e->lock);
}

/* Cancels a task whether it is waiting or running; its result is still reported. */
static void on_cancel(ex *e, uint64_t id) {
    pthread_mutex_lock(&e->lock);
    job *prev = NULL, *j = e->qhead;
    while (j && j->task_id != id) {
        prev = j;
        j = j->next;
    }
    if (j) {
        if (prev) {
            prev->next = j->next;
        } else {
            e->qhead = j->next;
        }
        if (e->qtail == j) {
            e->qtail = prev;
        }
        e->queued--;
    }
    pthread_mutex_unlock(&e->lock);
    if (j) {
        fk_exec x;
        memset(&x, 0, sizeof x);
        x.status = FK_CANCELLED;
        x.exit_code = -1;
        x.started_us = x.finished_us = fk_now_micros();
        x.out = fk_str_dup("", 0);
        x.err = fk_str_dup("", 0);
        x.detail = fk_str_of("cancelled before it started");
        finish(e, j->task_id, j->attempt, j->gen, &x);
        job_free(j);
        return;
    }
    for (int i = 0; i < e->nthreads; i++) {
        if (fk_runner_cancel(&e->runners[i], id)) {
            return;
        }
    }
}

static void terminate(ex *e, int status, const char *why) {
    if (!e->terminated) {
        e->terminated = 1;
        e->exit_status = status;
        snprintf(e->exit_why, sizeof e->exit_why, "%s", why);
        fk_info("%s; stopping", why);
    }
}

static void on_message(ex *e, fk_msg *m) {
    switch (m->type) {
    case FK_WELCOME:
        on_welcome(e, m);
        break;
    case FK_DISPATCH:
        on_dispatch(e, m);
        break;
    case FK_CANCEL:
        for (size_t i = 0; i < m->u.cancel.n; i++) {
            on_cancel(e, m->u.cancel.ids[i]);
        }
        break;
    case FK_HEARTBEAT:
        break;
    case FK_ERROR: {
        int code = m->u.error.code;
        char why[512];
        snprintf(why, sizeof why, "dispatcher error %d: %s", code, m->u.error.message.s);
        if (code == FK_ERR_SHUTTING_DOWN || code == FK_ERR_DUPLICATE_EXECUTOR || code == FK_ERR_UNAUTHORIZED
            || code == FK_ERR_UNSUPPORTED_VERSION) {
            /* on purpose, or not fixable by trying again */
            terminate(e, e->registered_once && code == FK_ERR_SHUTTING_DOWN ? 0 : 2, why);
        } else {
            fk_error("%s", why);
        }
        break;
    }
    default:
        fk_warn("ignoring unexpected message type 0x%x from the dispatcher", m->type);
    }
}

static void close_conn(ex *e) {
    fk_conn_close(&e->conn);
    e->registered = 0;
}

static void schedule_dial(ex *e) {
    int64_t now = fk_mono_millis();
    if (now - e->disconnected_at > (int64_t)e->cfg->reconnect_for_s * 1000) {
        char why[300];
        snprintf(why, sizeof why, "no dispatcher at %s:%d for %d s; giving up", e->cfg->host, e->cfg->port,
                 e->cfg->reconnect_for_s);
        terminate(e, 1, why);
        return;
    }
    int shift = e->attempt < 10 ? e->attempt : 10;
    e->attempt++;
    int64_t base = (int64_t)BACKOFF_FIRST_MS << shift;
    if (base > BACKOFF_MAX_MS) {
        base = BACKOFF_MAX_MS;
    }
    /* jitter: executors that lost the same dispatcher do not all dial at once */
    e->next_dial = now + base / 2 + (int64_t)(random() % (base / 2 + 1));
}

/* The connection is gone: stop its work, then dial again (or give up). */
static void disconnected(ex *e, const char *why) {
    int was_registered = e->registered;
    close_conn(e);
    if (e->terminated || e->stopping) {
        return;
    }
    atomic_fetch_add(&e->gen, 1); /* results of the old connection's tasks are now stale */
    cancel_all(e);
    if (!e->registered_once) {
        char msg[512];
        snprintf(msg, sizeof msg, "dispatcher at %s:%d did not accept the executor: %s", e->cfg->host, e->cfg->port,
                 why);
        terminate(e, 2, msg);
        return;
    }
    if (e->cfg->reconnect_for_s == 0) {
        terminate(e, 0, why);
        return;
    }
    if (e->disconnected_at < 0) {
        e->disconnected_at = fk_mono_millis();
        e->attempt = 0;
        fk_warn("%s%s; reconnecting for up to %d s", why, was_registered ? "" : " (before registering)",
                e->cfg->reconnect_for_s);
    }
    schedule_dial(e);
}

static void send_hello(ex *e) {
    fk_msg m;
    memset(&m, 0, sizeof m);
    m.type = FK_HELLO;
    m.u.hello.magic = FK_MAGIC;
    m.u.hello.version = FK_VERSION;
    m.u.hello.role = FK_ROLE_EXECUTOR;
    m.u.hello.token = fk_str_of(e->cfg->token ? e->cfg->token : "");
    m.u.hello.agent = fk_str_of(FK_AGENT);
    send_msg(e, &m);
    fk_msg_free(&m);
}

/* Starts a non-blocking connect; the poll loop completes it (and TLS). Returns 0, or -1 with why. */
static int dial(ex *e, char *why, size_t whylen) {
    if (fk_conn_dial(&e->conn, e->cfg->host, e->cfg->port, why, whylen) != 0) {
        return -1;
    }
    e->connect_deadline = fk_mono_millis() + CONNECT_TIMEOUT_MS;
    e->max_frame = FK_MAX_FRAME;
    e->heartbeat_ms = HEARTBEAT_MS;
    e->last_recv = e->last_send = fk_mono_millis();
    send_hello(e); /* queued until the connection is open */
    return 0;
}

/* The connect (and TLS handshake) moved on: open, still going, or failed. */
static void progressed(ex *e) {
    char why[512];
    int rc = fk_conn_progress(&e->conn, why, sizeof why);
    if (rc == 0) {
        return;
    }
    if (rc > 0) {
        e->last_recv = e->last_send = fk_mono_millis();
        return;
    }
    char msg[700];
    snprintf(msg, sizeof msg, "cannot connect to dispatcher at %s:%d: %s", e->cfg->host, e->cfg->port, why);
    close_conn(e);
    if (!e->registered_once) {
        terminate(e, 2, msg);
    } else {
        fk_warn("%s", msg);
        schedule_dial(e);
    }
}

static void read_frames(ex *e) {
    char why[512];
    long got = fk_conn_read(&e->conn, why, sizeof why);
    if (got < 0) {
        disconnected(e, why);
        return;
    }
    if (got > 0) {
        e->last_recv = fk_mono_millis();
    }
    fk_buf *in = &e->conn.in;
    size_t at = 0;
    while (fk_conn_open(&e->conn) && in->len - at >= 4) {
        uint32_t len = fk_get_u32(in->data + at);
        if (len == 0 || len > e->max_frame) {
            snprintf(why, sizeof why, "the dispatcher sent a frame of %u bytes (limit %u)", len, e->max_frame);
            disconnected(e, why);
            return;
        }
        if (in->len - at - 4 < len) {
            break;
        }
        fk_msg m;
        char err[300];
        if (fk_decode(in->data + at + 4, len, &m, err, sizeof err) != 0) {
            snprintf(why, sizeof why, "undecodable message from the dispatcher: %s", err);
            disconnected(e, why);
            return;
        }
        at += 4 + (size_t)len;
        on_message(e, &m);
        fk_msg_free(&m);
    }
    if (fk_conn_open(&e->conn)) {
        fk_buf_consume(in, at);
    }
}

static void write_out(ex *e) {
    size_t before = e->conn.out.len;
    char why[512];
    if (fk_conn_write(&e->conn, why, sizeof why) != 0) {
        disconnected(e, why);
        return;
    }
    if (e->conn.out.len < before) {
        e->last_send = fk_mono_millis();
    }
}

static void drain_wake(ex *e) {
    uint64_t v;
    while (read(e->wake_fd, &v, sizeof v) > 0) {
    }
}

/* Results go back at once, unless with prefetch a few more may join them soon. */
static void results_ready(ex *e, int64_t now) {
    pthread_mutex_lock(&e->lock);
    size_t ndone = e->ndone, queued = e->queued;
    pthread_mutex_unlock(&e->lock);
    if (ndone == 0) {
        return;
    }
    int p = e->granted;
    size_t enough = p / 2 > 1 ? (size_t)(p / 2) : 1;
    if (p == 0 || ndone >= enough || queued == 0) {
        flush_results(e);
        e->linger_until = -1;
    } else if (e->linger_until < 0) {
        e->linger_until = now + RESULT_LINGER_MS;
    } else if (now >= e->linger_until) {
        flush_results(e);
        e->linger_until = -1;
    }
}

static void loop(ex *e) {
    while (!e->terminated) {
        if (signalled) {
            terminate(e, 0, signalled == SIGTERM ? "SIGTERM" : "interrupted");
            break;
        }
        int64_t now = fk_mono_millis();
        if (e->conn.fd < 0 && e->next_dial >= 0 && now >= e->next_dial) {
            e->next_dial = -1;
            char why[256];
            if (dial(e, why, sizeof why) != 0) {
                schedule_dial(e);
                continue;
            }
        }
        if (fk_conn_open(&e->conn)) {
            if (e->registered) {
                results_ready(e, now);
                flush_cache_changes(e);
                if (e->cache && now >= e->next_summary) {
                    send_full_summary(e);
                    e->next_summary = now + CACHE_SUMMARY_MS;
                }
            }
            if (e->heartbeat_ms > 0 && now - e->last_recv > 3 * (int64_t)e->heartbeat_ms) {
                char why[128];
                snprintf(why, sizeof why, "nothing from the dispatcher for %d ms", 3 * e->heartbeat_ms);
                disconnected(e, why);
                continue;
            }
            if (e->heartbeat_ms > 0 && now - e->last_send >= e->heartbeat_ms && e->conn.out.len == 0) {
                fk_msg hb;
                memset(&hb, 0, sizeof hb);
                hb.type = FK_HEARTBEAT;
                hb.u.heartbeat.time_us = fk_now_micros();
                send_msg(e, &hb);
            }
            write_out(e);
            if (e->conn.fd < 0) {
                continue;
            }
        } else if (e->conn.fd >= 0 && now >= e->connect_deadline) {
            close_conn(e);
            if (!e->registered_once) {
                terminate(e, 2, "cannot connect to the dispatcher: timed out");
                break;
            }
            schedule_dial(e);
            continue;
        }

        if (e->cfg->idle_exit_ms > 0 && e->registered) {
            pthread_mutex_lock(&e->lock);
            size_t holding = e->queued + e->running + e->ndone;
            pthread_mutex_unlock(&e->lock);
            if (holding > 0 || e->conn.out.len > 0) {
                e->idle_since = now;
            } else if (now - e->idle_since >= e->cfg->idle_exit_ms) {
                char why[64];
                snprintf(why, sizeof why, "idle for %.1f s (--idle-exit)", e->cfg->idle_exit_ms / 1000.0);
                terminate(e, 0, why);
                break;
            }
        }

        struct pollfd p[2];
        nfds_t n = 0;
        p[n++] = (struct pollfd){.fd = e->wake_fd, .events = POLLIN};
        int sock = -1;
        if (e->conn.fd >= 0) {
            sock = (int)n;
            p[n++] = (struct pollfd){.fd = e->conn.fd, .events = fk_conn_events(&e->conn)};
        }
        int64_t until = now + 1000;
        if (fk_conn_open(&e->conn) && e->heartbeat_ms > 0) {
            int64_t hb = e->last_send + e->heartbeat_ms;
            int64_t dead = e->last_recv + 3 * (int64_t)e->heartbeat_ms + 1;
            until = hb < until ? hb : until;
            until = dead < until ? dead : until;
        } else if (e->conn.fd >= 0 && !fk_conn_open(&e->conn) && e->connect_deadline < until) {
            until = e->connect_deadline;
        }
        if (e->linger_until >= 0 && e->linger_until < until) {
            until = e->linger_until;
        }
        if (e->cfg->idle_exit_ms > 0 && e->registered && e->idle_since + e->cfg->idle_exit_ms < until) {
            until = e->idle_since + e->cfg->idle_exit_ms;
        }
        if (e->conn.fd < 0 && e->next_dial >= 0 && e->next_dial < until) {
            until = e->next_dial;
        }
        int timeout = until > now ? (int)(until - now) : 0;
        int k = poll(p, n, timeout);
        if (k < 0) {
            if (errno == EINTR) {
                continue;
            }
            fk_error("poll: %s", strerror(errno));
            terminate(e, 1, "internal error");
            break;
        }
        if (p[0].revents & POLLIN) {
            drain_wake(e);
        }
        if (sock >= 0 && p[sock].revents) {
            if (!fk_conn_open(&e->conn)) {
                progressed(e);
            } else {
                if (p[sock].revents & (POLLIN | POLLHUP | POLLERR)) {
                    read_frames(e);
                }
                if (fk_conn_open(&e->conn) && (p[sock].revents & POLLOUT)) {
                    write_out(e);
                }
            }
        }
    }
}

static int make_spool(ex *e) {
    const char *tmp = getenv("TMPDIR");
    snprintf(e->spool, sizeof e->spool, "%s/falkon-executor-c-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(e->spool)) {
        fprintf(stderr, "falkon-executor-c: cannot create a spool directory %s: %s\n", e->spool, strerror(errno));
        return -1;
    }
    return 0;
}

int fk_executor_run(const fk_config *cfg) {
    ex e;
    memset(&e, 0, sizeof e);
    e.cfg = cfg;
    e.disconnected_at = -1;
    e.next_dial = -1;
    e.linger_until = -1;
    e.heartbeat_ms = HEARTBEAT_MS;
    e.max_frame = FK_MAX_FRAME;
    pthread_mutex_init(&e.lock, NULL);
    pthread_cond_init(&e.cond, NULL);
    if (gethostname(e.hostname, sizeof e.hostname - 1) != 0) {
        strcpy(e.hostname, "localhost");
    }
    srandom((unsigned)(getpid() ^ fk_now_micros()));
    e.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (e.wake_fd < 0 || make_spool(&e) != 0) {
        return 2;
    }
    int status = 2;
    char err[512];
    if (cfg->tls) {
        e.tls = fk_tls_client(cfg->tls_ca, err, sizeof err);
        if (!e.tls) {
            fprintf(stderr, "falkon-executor-c: %s\n", err);
            fk_rmtree(e.spool);
            return 2;
        }
    }
    fk_conn_init(&e.conn, e.tls);
    if (cfg->cache_size > 0 && !cfg->no_exec) {
        char dir[300];
        if (cfg->cache_dir) {
            snprintf(dir, sizeof dir, "%s", cfg->cache_dir);
        } else {
            snprintf(dir, sizeof dir, "%s/cache", e.spool);
        }
        e.cache = fk_cache_open(dir, cfg->cache_size, cfg->store, cfg->token, cfg->revalidate, cache_changed, &e, err,
                                sizeof err);
        if (!e.cache) {
            fprintf(stderr, "falkon-executor-c: cannot set up the data cache: %s\n", err);
            goto out;
        }
        e.peer = fk_peer_start(e.cache, cfg->cache_port, cfg->token, err, sizeof err);
        if (!e.peer) {
            fprintf(stderr, "falkon-executor-c: cannot start the cache server: %s\n", err);
            goto out;
        }
    }
    char sandboxes[300];
    snprintf(sandboxes, sizeof sandboxes, "%s/sandboxes", e.spool);
    mkdir(sandboxes, 0700);
    e.staging.cache = e.cache;
    e.staging.store = cfg->store;
    e.staging.outputs = cfg->output_dir ? cfg->output_dir : cfg->store;
    e.staging.sandboxes = sandboxes;
    if (!cfg->no_exec) {
        e.nthreads = cfg->slots;
        e.runners = calloc((size_t)cfg->slots, sizeof(fk_runner));
        e.threads = calloc((size_t)cfg->slots, sizeof(pthread_t));
        if (!e.runners || !e.threads) {
            abort();
        }
        for (int i = 0; i < cfg->slots; i++) {
            fk_runner_init(&e.runners[i], cfg->output_cap, cfg->workdir);
        }
        for (int i = 0; i < cfg->slots; i++) {
            slot_arg *a = malloc(sizeof *a);
            if (!a) {
                abort();
            }
            a->e = &e;
            a->slot = i;
            pthread_attr_t attr;
            pthread_attr_init(&attr);
            pthread_attr_setstacksize(&attr, 256 * 1024);
            if (pthread_create(&e.threads[i], &attr, slot_main, a) != 0) {
                abort();
            }
            pthread_attr_destroy(&attr);
        }
    }

    signal_wake_fd = e.wake_fd;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (dial(&e, err, sizeof err) != 0) {
        fprintf(stderr, "falkon-executor-c: cannot connect to dispatcher at %s:%d: %s\n", cfg->host, cfg->port, err);
    } else {
        loop(&e);
        status = e.exit_status;
        if (status == 2 && !e.registered_once) {
            fprintf(stderr, "falkon-executor-c: %s\n", e.exit_why);
        }
    }

out:
    /* stop: refuse nothing more, kill what runs, join the slots, remove the spool */
    pthread_mutex_lock(&e.lock);
    e.stopping = 1;
    pthread_cond_broadcast(&e.cond);
    pthread_mutex_unlock(&e.lock);
    close_conn(&e);
    for (int i = 0; i < e.nthreads; i++) {
        fk_runner_close(&e.runners[i]);
    }
    cancel_all(&e);
    for (int i = 0; i < e.nthreads; i++) {
        pthread_join(e.threads[i], NULL);
    }
    cancel_all(&e); /* anything a slot finished while stopping */
    for (int i = 0; i < e.nthreads; i++) {
        fk_runner_destroy(&e.runners[i]);
    }
    free(e.runners);
    free(e.threads);
    if (e.peer) {
        fk_peer_stop(e.peer);
    }
    if (e.cache) {
        fk_cache_close(e.cache);
    }
    free_changes(take_changes(&e));
    signal_wake_fd = -1;
    close(e.wake_fd);
    fk_conn_destroy(&e.conn);
    fk_tls_free(e.tls);
    pthread_mutex_destroy(&e.lock);
    pthread_cond_destroy(&e.cond);
    fk_rmtree(e.spool);
    return status;
}
