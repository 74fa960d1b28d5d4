/* The connection to the dispatcher: dialling with back-off, the handshake and registration,
 * reading frames, writing what is queued, and what a lost connection means. Main thread. */
#include "executor_state.h"

#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void ex_send_msg(ex *e, const fk_msg *m) {
    fk_encode(m, &e->session.conn.out);
}

/* Whether a registration is live: messages sent now reach this connection's dispatcher. */
int ex_live(const ex *e) {
    return fk_conn_open(&e->session.conn) && e->session.registered;
}

void ex_session_init(ex *e, void (*on_message)(ex *e, fk_msg *m)) {
    e->session.on_message = on_message;
    e->session.disconnected_at = -1;
    e->session.next_dial = -1;
    e->session.heartbeat_ms = HEARTBEAT_MS;
    e->session.max_frame = FK_MAX_FRAME;
}

int ex_session_open(ex *e, char *err, size_t errlen) {
    if (e->cfg->tls) {
        e->session.tls = fk_tls_client(e->cfg->tls_ca, err, errlen);
        if (!e->session.tls) {
            return -1;
        }
    }
    fk_conn_init(&e->session.conn, e->session.tls);
    return 0;
}

void ex_session_destroy(ex *e) {
    fk_conn_destroy(&e->session.conn);
    fk_tls_free(e->session.tls);
}

int ex_dial_due(ex *e, int64_t now) {
    if (e->session.conn.fd >= 0 || e->session.next_dial < 0 || now < e->session.next_dial) {
        return 0;
    }
    e->session.next_dial = -1;
    return 1;
}

void ex_on_welcome(ex *e, const fk_msg *w) {
    const fk_config *c = e->cfg;
    e->session.max_frame = w->u.welcome.max_frame ? w->u.welcome.max_frame : FK_MAX_FRAME;
    /* the dispatcher's interval, whatever it is: 0 means no heartbeats either way (docs/protocol.md) */
    e->session.heartbeat_ms = w->u.welcome.heartbeat_ms > INT32_MAX / 4 ? INT32_MAX / 4 : (int)w->u.welcome.heartbeat_ms;
    char pid[32], prefetch[32], port[32];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    if (c->prefetch == FK_PREFETCH_AUTO) {
        snprintf(prefetch, sizeof prefetch, "auto");
    } else {
        snprintf(prefetch, sizeof prefetch, "%d", c->prefetch);
    }
    char memory[32], disk[32];
    snprintf(memory, sizeof memory, "%lld", (long long)c->memory_mib);
    snprintf(disk, sizeof disk, "%lld", (long long)c->disk_mib);
    char resources[1024] = "";
    if (c->resources) {
        fk_resources_attribute(c->resources, resources, sizeof resources);
    }
    fk_kv attrs[10];
    size_t na = 0;
    attrs[na].key = fk_str_of("impl");
    attrs[na++].value = fk_str_of("c");
    attrs[na].key = fk_str_of("pid");
    attrs[na++].value = fk_str_of(pid);
    attrs[na].key = fk_str_of("runner");
    attrs[na++].value = fk_str_of(c->no_exec ? "no-exec" : "vfork");
    attrs[na].key = fk_str_of("prefetch");
    attrs[na++].value = fk_str_of(prefetch);
    attrs[na].key = fk_str_of("memoryMiB");
    attrs[na++].value = fk_str_of(memory);
    attrs[na].key = fk_str_of("diskMiB");
    attrs[na++].value = fk_str_of(disk);
    if (resources[0]) {
        attrs[na].key = fk_str_of("resources");
        attrs[na++].value = fk_str_of(resources);
    }
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
    ex_send_msg(e, &m);
    fk_str_free(&m.u.reg.id);
    fk_str_free(&m.u.reg.host);
    for (size_t i = 0; i < na; i++) {
        fk_str_free(&attrs[i].key);
        fk_str_free(&attrs[i].value);
    }
    e->session.registered = 1;
    ex_idle_from(e, fk_mono_millis()); /* --idle-exit counts from a registration */
    if (e->cache) {
        /* what was held for the last session's tasks: that dispatcher re-runs a producer it lost, and a
         * new one has no task that needs them */
        fk_cache_unhold_all(e->cache);
        ex_send_full_summary(e); /* a new dispatcher knows nothing yet */
    }
    memset(&m, 0, sizeof m);
    m.type = FK_CREDIT;
    ex_grant(e, ex_prefetch_initial(e));
    m.u.credit.credits = (uint32_t)(c->slots + e->reports.granted);
    ex_send_msg(e, &m);
    if (e->session.disconnected_at >= 0 && e->session.registered_once) {
        e->session.reconnects++;
        fk_info("registered again with %s after %lld ms", c->where,
                (long long)(fk_mono_millis() - e->session.disconnected_at));
        e->session.disconnected_at = -1;
    } else if (!e->session.registered_once) {
        if (e->session.disconnected_at >= 0) {
            fk_info("%s answered after %lld ms", c->where, (long long)(fk_mono_millis() - e->session.disconnected_at));
            e->session.disconnected_at = -1;
        }
        if (e->cache) {
            fk_info("registered with %s (%d slots, %s, %lld MiB LRU cache served on port %d)", c->where,
                    c->slots, c->no_exec ? "NO-EXEC benchmark mode: tasks are not run" : "processes via vfork + exec",
                    (long long)(c->cache_size >> 20), fk_peer_port(e->peer));
        } else {
            fk_info("registered with %s (%d slots, %s)", c->where, c->slots,
                    c->no_exec ? "NO-EXEC benchmark mode: tasks are not run" : "processes via vfork + exec");
        }
    }
    e->session.registered_once = 1;
}

void ex_close_conn(ex *e) {
    fk_conn_close(&e->session.conn);
    e->session.registered = 0;
}

void ex_schedule_dial(ex *e) {
    int64_t now = fk_mono_millis();
    if (now - e->session.disconnected_at > (int64_t)e->cfg->reconnect_for_s * 1000) {
        char why[600];
        if (e->session.registered_once) {
            snprintf(why, sizeof why, "no dispatcher at %s for %d s; giving up", e->cfg->where,
                     e->cfg->reconnect_for_s);
        } else {
            snprintf(why, sizeof why, "cannot connect to dispatcher at %s within %d s: %s", e->cfg->where,
                      e->cfg->reconnect_for_s, e->session.last_dial_error);
        }
        ex_terminate(e, e->session.registered_once ? 1 : 2, why);
        return;
    }
    int shift = e->session.attempt < 10 ? e->session.attempt : 10;
    e->session.attempt++;
    int64_t base = (int64_t)BACKOFF_FIRST_MS << shift;
    if (base > BACKOFF_MAX_MS) {
        base = BACKOFF_MAX_MS;
    }
    /* jitter: executors that lost the same dispatcher do not all dial at once */
    e->session.next_dial = now + base / 2 + (int64_t)(random() % (base / 2 + 1));
}

/* The first connection could not be made (nothing listens there yet, or it timed out): a batch
 * script may start the dispatcher and its executors together, so dial again for up to
 * --reconnect-for, saying so once; with --reconnect-for 0 it is the end at once. */
void ex_first_dial_failed(ex *e, const char *why) {
    snprintf(e->session.last_dial_error, sizeof e->session.last_dial_error, "%s", why);
    if (e->cfg->reconnect_for_s == 0) {
        char msg[700];
        snprintf(msg, sizeof msg, "cannot connect to dispatcher at %s: %s", e->cfg->where, why);
        ex_terminate(e, 2, msg);
        return;
    }
    if (e->session.disconnected_at < 0) {
        e->session.disconnected_at = fk_mono_millis();
        e->session.attempt = 0;
        fk_warn("no dispatcher at %s yet (%s); dialling again for up to %d s", e->cfg->where, why,
                e->cfg->reconnect_for_s);
    }
    ex_schedule_dial(e);
}

/* The connection is gone: stop its work, then dial again (or give up). */
void ex_disconnected(ex *e, const char *why) {
    int was_registered = e->session.registered;
    ex_close_conn(e);
    if (e->terminated || e->queue.stopping) {
        return;
    }
    atomic_fetch_add(&e->queue.gen, 1); /* results of the old connection's tasks are now stale */
    ex_cancel_all(e);
    if (!e->session.registered_once) {
        char msg[512];
        snprintf(msg, sizeof msg, "dispatcher at %s did not accept the executor: %s", e->cfg->where,
                 why);
        ex_terminate(e, 2, msg);
        return;
    }
    if (e->cfg->reconnect_for_s == 0) {
        ex_terminate(e, 0, why);
        return;
    }
    if (e->session.disconnected_at < 0) {
        e->session.disconnected_at = fk_mono_millis();
        e->session.attempt = 0;
        fk_warn("%s%s; reconnecting for up to %d s", why, was_registered ? "" : " (before registering)",
                e->cfg->reconnect_for_s);
    }
    ex_schedule_dial(e);
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
    ex_send_msg(e, &m);
    fk_msg_free(&m);
}

/* Starts a non-blocking connect; the poll loop completes it (and TLS). Returns 0, or -1 with why. */
int ex_dial(ex *e, char *why, size_t whylen) {
    if (e->cfg->port == 0 && e->cfg->stdio_in > 0) {
        /* the parent's pipes, open from the start; once closed they are gone (--reconnect-for is 0) */
        fk_conn_attach(&e->session.conn, e->cfg->stdio_in, e->cfg->stdio_out);
    } else if (fk_conn_dial(&e->session.conn, e->cfg->host, e->cfg->port, why, whylen) != 0) {
        return -1;
    }
    e->session.connect_deadline = fk_mono_millis() + CONNECT_TIMEOUT_MS;
    e->session.max_frame = FK_MAX_FRAME;
    e->session.heartbeat_ms = HEARTBEAT_MS;
    e->session.last_recv = e->session.last_send = fk_mono_millis();
    send_hello(e); /* queued until the connection is open */
    return 0;
}

/* The connect (and TLS handshake) moved on: open, still going, or failed. */
void ex_progressed(ex *e) {
    char why[512];
    int rc = fk_conn_progress(&e->session.conn, why, sizeof why);
    if (rc == 0) {
        return;
    }
    if (rc > 0) {
        e->session.last_recv = e->session.last_send = fk_mono_millis();
        return;
    }
    char msg[700];
    snprintf(msg, sizeof msg, "cannot connect to dispatcher at %s: %s", e->cfg->where, why);
    ex_close_conn(e);
    if (!e->session.registered_once) {
        ex_first_dial_failed(e, why);
    } else {
        fk_warn("%s", msg);
        ex_schedule_dial(e);
    }
}

void ex_read_frames(ex *e) {
    char why[512];
    long got = fk_conn_read(&e->session.conn, why, sizeof why);
    if (got < 0) {
        ex_disconnected(e, why);
        return;
    }
    if (got > 0) {
        e->session.last_recv = fk_mono_millis();
    }
    fk_buf *in = &e->session.conn.in;
    size_t at = 0;
    while (fk_conn_open(&e->session.conn) && in->len - at >= 4) {
        uint32_t len = fk_get_u32(in->data + at);
        if (len == 0 || len > e->session.max_frame) {
            snprintf(why, sizeof why, "the dispatcher sent a frame of %u bytes (limit %u)", len, e->session.max_frame);
            ex_disconnected(e, why);
            return;
        }
        if (in->len - at - 4 < len) {
            break;
        }
        fk_msg m;
        char err[300];
        if (fk_decode(in->data + at + 4, len, &m, err, sizeof err) != 0) {
            snprintf(why, sizeof why, "undecodable message from the dispatcher: %s", err);
            ex_disconnected(e, why);
            return;
        }
        at += 4 + (size_t)len;
        e->session.on_message(e, &m);
        fk_msg_free(&m);
    }
    if (fk_conn_open(&e->session.conn)) {
        fk_buf_consume(in, at);
    }
}

void ex_write_out(ex *e) {
    size_t before = e->session.conn.out.len;
    char why[512];
    if (fk_conn_write(&e->session.conn, why, sizeof why) != 0) {
        /* A dispatcher that stops for good says so (ERROR SHUTTING_DOWN) and closes; if it had
         * bytes of ours unread, its close is a reset and our write fails before we read why:
         * read what it sent first, or we would dial for --reconnect-for a dispatcher that is gone. */
        ex_read_frames(e);
        if (e->session.conn.fd >= 0) {
            ex_disconnected(e, why);
        }
        return;
    }
    if (e->session.conn.out.len < before) {
        e->session.last_send = fk_mono_millis();
    }
}
