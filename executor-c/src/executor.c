/* The executor's main thread: the poll loop (dialling, reading, writing, heartbeats, idle exit),
 * what DISPATCH, CANCEL and ERROR do, and setting up and tearing down everything else. */
#include "executor_state.h"

#include "archive.h"

#include "fsutil.h"
#include "log.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

static volatile sig_atomic_t signalled;
static int signal_wake_fd = -1;

static void on_signal(int sig) {
    signalled = sig;
    uint64_t one = 1;
    if (signal_wake_fd >= 0 && write(signal_wake_fd, &one, sizeof one) < 0) {
        /* nothing to do in a handler */
    }
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
    if (e->queue.stopping || e->cfg->no_exec) {
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
            if (e->queue.stopping) {
                reject(&r, &m->u.dispatch.tasks[i], FK_REJECTED, "executor is shutting down");
            } else {
                reject(&r, &m->u.dispatch.tasks[i], FK_EXITED, "");
                r.u.result.results[i].exec.flags = FK_FLAG_NO_EXEC;
            }
        }
        uint32_t credits = 0;
        for (size_t i = 0; i < n && !e->queue.stopping; i++) {
            credits += fk_spec_blob_cores((const uint8_t *)m->u.dispatch.tasks[i].spec.s, m->u.dispatch.tasks[i].spec.len);
        }
        r.u.result.credits = credits;
        ex_send_msg(e, &r);
        fk_msg_free(&r);
        return;
    }
    int gen = atomic_load(&e->queue.gen);
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
            ex_finish_unrun(e, t->task_id, t->attempt, gen,
                            fk_spec_blob_cores((const uint8_t *)t->spec.s, t->spec.len), FK_LAUNCH_FAILED, 0, why);
            free(j);
            continue;
        }
        j->cores = fk_spec_cores(&j->spec, &j->declared);
        if (j->cores > (uint32_t)e->cfg->slots) {
            /* the dispatcher sends a task only where it fits: this one came from elsewhere */
            char why[160];
            snprintf(why, sizeof why, "needs %u cores; this executor has %d slots", j->cores, e->cfg->slots);
            ex_finish_unrun(e, t->task_id, t->attempt, gen, j->cores, FK_REJECTED, FK_FLAG_PERMANENT, why);
            ex_job_free(j);
            continue;
        }
        if (fk_ext_find(&j->spec.ext, FK_EXT_NAMED_RESOURCES)) {
            char why[1200];
            j->asked = calloc(1, sizeof *j->asked);
            if (!j->asked) {
                abort();
            }
            const char *problem = fk_asked_of(&j->spec, j->asked, err, sizeof err) != 0 ? err
                : e->cfg->resources ? fk_resources_problem(e->cfg->resources, j->asked, why, sizeof why)
                : "needs named resources; this executor offers none";
            if (problem) {
                ex_finish_unrun(e, t->task_id, t->attempt, gen, j->cores, FK_REJECTED, FK_FLAG_PERMANENT, problem);
                ex_job_free(j);
                continue;
            }
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
    ex_enqueue(e, head, tail, added);
}

void ex_terminate(ex *e, int status, const char *why) {
    if (!e->terminated) {
        e->terminated = 1;
        e->exit_status = status;
        snprintf(e->exit_why, sizeof e->exit_why, "%s", why);
        fk_info("%s; stopping", why);
    }
}

void ex_idle_from(ex *e, int64_t now) {
    e->idle_since = now;
}

void ex_on_message(ex *e, fk_msg *m) {
    switch (m->type) {
    case FK_WELCOME:
        ex_on_welcome(e, m);
        break;
    case FK_DISPATCH:
        on_dispatch(e, m);
        break;
    case FK_CANCEL:
        for (size_t i = 0; i < m->u.cancel.n; i++) {
            ex_cancel_task(e, m->u.cancel.ids[i]);
        }
        break;
    case FK_REPLICATE:
        for (size_t i = 0; e->cache && i < m->u.replicate.n; i++) {
            fk_cache_replicate(e->cache, &m->u.replicate.objects[i]);
        }
        break;
    case FK_RELEASE:
        if (e->cache) {
            fk_cache_unhold(e->cache, m->u.release.ids, m->u.release.n);
        }
        break;
    case FK_HEARTBEAT:
        break;
    case FK_ERROR: {
        int code = m->u.error.code;
        char why[512];
        snprintf(why, sizeof why, "dispatcher error %s: %s", fk_error_name(code), m->u.error.message.s);
        if (code == FK_ERR_SHUTTING_DOWN || code == FK_ERR_DUPLICATE_EXECUTOR || code == FK_ERR_UNAUTHORIZED
            || code == FK_ERR_UNSUPPORTED_VERSION) {
            /* on purpose, or not fixable by trying again */
            ex_terminate(e, e->session.registered_once && code == FK_ERR_SHUTTING_DOWN ? 0 : 2, why);
        } else {
            fk_error("%s", why);
        }
        break;
    }
    default:
        fk_warn("ignoring unexpected message type 0x%x from the dispatcher", m->type);
    }
}

static void drain_wake(ex *e) {
    uint64_t v;
    while (read(e->queue.wake_fd, &v, sizeof v) > 0) {
    }
}

static void loop(ex *e) {
    while (!e->terminated) {
        /* when the cache changes pending are reported: only while registered (they wait for the
         * next session otherwise, whose full summary supersedes them), so poll never spins on a
         * time gone by while the connection is down */
        int64_t changes_due = -1;
        if (signalled) {
            ex_terminate(e, 0, signalled == SIGTERM ? "SIGTERM" : "interrupted");
            break;
        }
        int64_t now = fk_mono_millis();
        if (ex_dial_due(e, now)) {
            char why[256];
            if (ex_dial(e, why, sizeof why) != 0) {
                if (!e->session.registered_once) {
                    ex_first_dial_failed(e, why);
                } else {
                    ex_schedule_dial(e);
                }
                continue;
            }
        }
        if (fk_conn_open(&e->session.conn)) {
            if (e->session.registered) {
                ex_results_ready(e, now);
                changes_due = ex_flush_cache_changes(e, now, 0);
                if (e->cache && ex_summary_due(e, now)) {
                    ex_send_full_summary(e);
                }
            }
            if (e->session.heartbeat_ms > 0 && now - e->session.last_recv > 3 * (int64_t)e->session.heartbeat_ms) {
                char why[128];
                snprintf(why, sizeof why, "nothing from the dispatcher for %d ms", 3 * e->session.heartbeat_ms);
                ex_disconnected(e, why);
                continue;
            }
            if (e->session.heartbeat_ms > 0 && now - e->session.last_send >= e->session.heartbeat_ms && e->session.conn.out.len == 0) {
                fk_msg hb;
                memset(&hb, 0, sizeof hb);
                hb.type = FK_HEARTBEAT;
                hb.u.heartbeat.time_us = fk_now_micros();
                ex_send_msg(e, &hb);
            }
            ex_write_out(e);
            if (e->session.conn.fd < 0) {
                continue;
            }
        } else if (e->session.conn.fd >= 0 && now >= e->session.connect_deadline) {
            ex_close_conn(e);
            if (!e->session.registered_once) {
                ex_first_dial_failed(e, "timed out");
                continue;
            }
            ex_schedule_dial(e);
            continue;
        }

        if (e->cfg->idle_exit_ms > 0 && e->session.registered) {
            if (ex_holding(e) > 0 || e->session.conn.out.len > 0) {
                ex_idle_from(e, now);
            } else if (now - e->idle_since >= e->cfg->idle_exit_ms) {
                char why[64];
                snprintf(why, sizeof why, "idle for %.1f s (--idle-exit)", e->cfg->idle_exit_ms / 1000.0);
                ex_terminate(e, 0, why);
                break;
            }
        }

        struct pollfd p[3];
        nfds_t n = 0;
        p[n++] = (struct pollfd){.fd = e->queue.wake_fd, .events = POLLIN};
        int sock = -1, wpipe = -1;
        if (e->session.conn.fd >= 0) {
            sock = (int)n;
            p[n++] = (struct pollfd){.fd = e->session.conn.fd, .events = fk_conn_events(&e->session.conn)};
            if (fk_conn_piped(&e->session.conn) && e->session.conn.out.len > 0) {
                wpipe = (int)n; /* a pair of pipes: the one written to is polled on its own */
                p[n++] = (struct pollfd){.fd = e->session.conn.wfd, .events = POLLOUT};
            }
        }
        int64_t until = now + 1000;
        if (fk_conn_open(&e->session.conn) && e->session.heartbeat_ms > 0) {
            int64_t hb = e->session.last_send + e->session.heartbeat_ms;
            int64_t dead = e->session.last_recv + 3 * (int64_t)e->session.heartbeat_ms + 1;
            until = hb < until ? hb : until;
            until = dead < until ? dead : until;
        } else if (e->session.conn.fd >= 0 && !fk_conn_open(&e->session.conn) && e->session.connect_deadline < until) {
            until = e->session.connect_deadline;
        }
        if (changes_due >= 0 && changes_due < until) {
            until = changes_due;
        }
        if (e->reports.linger_until >= 0 && e->reports.linger_until < until) {
            until = e->reports.linger_until;
        }
        if (e->cfg->idle_exit_ms > 0 && e->session.registered && e->idle_since + e->cfg->idle_exit_ms < until) {
            until = e->idle_since + e->cfg->idle_exit_ms;
        }
        if (e->session.conn.fd < 0 && e->session.next_dial >= 0 && e->session.next_dial < until) {
            until = e->session.next_dial;
        }
        int timeout = until > now ? (int)(until - now) : 0;
        int k = poll(p, n, timeout);
        if (k < 0) {
            if (errno == EINTR) {
                continue;
            }
            fk_error("poll: %s", strerror(errno));
            ex_terminate(e, 1, "internal error");
            break;
        }
        if (p[0].revents & POLLIN) {
            drain_wake(e);
        }
        if (sock >= 0 && (p[sock].revents || (wpipe >= 0 && p[wpipe].revents))) {
            if (!fk_conn_open(&e->session.conn)) {
                ex_progressed(e);
            } else {
                if (p[sock].revents & (POLLIN | POLLHUP | POLLERR)) {
                    ex_read_frames(e);
                }
                /* a pipe whose reader has gone says POLLERR: the write then fails and says why */
                short w = wpipe >= 0 ? (short)(p[wpipe].revents & (POLLOUT | POLLERR | POLLHUP))
                                     : (short)(p[sock].revents & POLLOUT);
                if (fk_conn_open(&e->session.conn) && w) {
                    ex_write_out(e);
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
    ex_session_init(&e, ex_on_message);
    ex_reports_init(&e);
    if (gethostname(e.hostname, sizeof e.hostname - 1) != 0) {
        strcpy(e.hostname, "localhost");
    }
    srandom((unsigned)(getpid() ^ fk_now_micros()));
    /* SIGTERM and SIGINT are heard from the start: one that comes while the executor sets up (a
     * test, a batch job cancelled at once) still ends it through its stop, which removes the spool */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (ex_queue_init(&e) != 0) {
        return 2;
    }
    signal_wake_fd = e.queue.wake_fd;
    if (make_spool(&e) != 0) {
        signal_wake_fd = -1;
        ex_queue_destroy(&e);
        return 2;
    }
    int status = 2;
    char err[512];
    if (ex_session_open(&e, err, sizeof err) != 0) {
        fprintf(stderr, "falkon-executor-c: %s\n", err);
        fk_rmtree(e.spool);
        return 2;
    }
    if (cfg->cache_size > 0 && !cfg->no_exec) {
        char dir[300];
        if (cfg->cache_dir) {
            snprintf(dir, sizeof dir, "%s", cfg->cache_dir);
        } else {
            snprintf(dir, sizeof dir, "%s/cache", e.spool);
        }
        e.cache = fk_cache_open(dir, cfg->cache_size, cfg->store, cfg->token, cfg->revalidate, ex_cache_changed, &e, err,
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
        fk_peer_emulate_uplink(e.peer, cfg->uplink_bps);
    }
    char sandboxes[300];
    snprintf(sandboxes, sizeof sandboxes, "%s/sandboxes", e.spool);
    mkdir(sandboxes, 0700);
    e.staging.cache = e.cache;
    e.staging.store = cfg->store;
    e.staging.outputs = cfg->output_dir ? cfg->output_dir : cfg->store;
    e.staging.archive = e.staging.outputs && !cfg->no_exec
                        ? fk_archive_new(e.staging.outputs, cfg->id, FK_ARCHIVE_THRESHOLD) : NULL;
    e.staging.sandboxes = sandboxes;
    ex_start_slots(&e);

    if (ex_dial(&e, err, sizeof err) != 0) {
        ex_first_dial_failed(&e, err);
    }
    if (!e.terminated) {
        loop(&e);
    }
    status = e.exit_status;
    if (status == 2 && !e.session.registered_once) {
        fprintf(stderr, "falkon-executor-c: %s\n", e.exit_why);
    }

out:
    /* stop: refuse nothing more, kill what runs, join the slots, remove the spool */
    ex_close_conn(&e);
    ex_stop_slots(&e);
    if (e.peer) {
        fk_peer_stop(e.peer);
    }
    if (e.cache) {
        fk_cache_close(e.cache);
    }
    fk_archive_close(e.staging.archive); /* its end blocks: every entry was on disk already */
    ex_free_changes(ex_take_changes(&e));
    signal_wake_fd = -1;
    ex_session_destroy(&e);
    ex_queue_destroy(&e);
    fk_rmtree(e.spool);
    return status;
}
