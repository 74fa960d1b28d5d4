#include "dump.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void put(fk_buf *b, const char *s) {
    fk_buf_put(b, s, strlen(s));
}

static void key(fk_buf *b, const char *path) {
    put(b, path);
    put(b, " = ");
}

static void num(fk_buf *b, const char *path, int64_t v) {
    char t[32];
    snprintf(t, sizeof t, "%" PRId64 "\n", v);
    key(b, path);
    put(b, t);
}

static void unum(fk_buf *b, const char *path, uint64_t v) {
    char t[32];
    snprintf(t, sizeof t, "%" PRIu64 "\n", v);
    key(b, path);
    put(b, t);
}

static void quoted(fk_buf *b, const char *path, const fk_str *s) {
    key(b, path);
    fk_buf_u8(b, '"');
    for (size_t i = 0; i < s->len; i++) {
        unsigned c = (unsigned char)s->s[i];
        char t[8];
        switch (c) {
        case '"': put(b, "\\\""); break;
        case '\\': put(b, "\\\\"); break;
        case '\n': put(b, "\\n"); break;
        case '\r': put(b, "\\r"); break;
        case '\t': put(b, "\\t"); break;
        default:
            if (c >= 0x20 && c <= 0x7e) {
                fk_buf_u8(b, (uint8_t)c);
            } else {
                snprintf(t, sizeof t, "\\x%02x", c);
                put(b, t);
            }
        }
    }
    put(b, "\"\n");
}

/* Builds "prefix" + formatted suffix into a fixed path buffer. */
#define PATH(buf, ...) snprintf(buf, sizeof buf, __VA_ARGS__)

static void ext(fk_buf *b, const char *path, const fk_ext_list *l) {
    char p[256];
    PATH(p, "%s.count", path);
    num(b, p, (int64_t)l->n);
    for (size_t i = 0; i < l->n; i++) {
        PATH(p, "%s[%zu].tag", path, i);
        num(b, p, l->items[i].tag);
        PATH(p, "%s[%zu].value", path, i);
        quoted(b, p, &l->items[i].value);
    }
}

static int spec(fk_buf *b, const char *path, const fk_str *blob) {
    fk_spec s;
    char err[256];
    if (fk_spec_decode((const uint8_t *)blob->s, blob->len, &s, err, sizeof err) != 0) {
        return -1;
    }
    char p[256];
    PATH(p, "%s.argv.count", path);
    num(b, p, (int64_t)s.argc);
    for (size_t i = 0; i < s.argc; i++) {
        PATH(p, "%s.argv[%zu]", path, i);
        quoted(b, p, &s.argv[i]);
    }
    PATH(p, "%s.env.count", path);
    num(b, p, (int64_t)s.env.n);
    for (size_t i = 0; i < s.env.n; i++) {
        PATH(p, "%s.env[%zu].key", path, i);
        quoted(b, p, &s.env.items[i].key);
        PATH(p, "%s.env[%zu].value", path, i);
        quoted(b, p, &s.env.items[i].value);
    }
    PATH(p, "%s.workDir", path);
    quoted(b, p, &s.workdir);
    PATH(p, "%s.wallTimeMillis", path);
    num(b, p, s.wall_ms);
    PATH(p, "%s.ext", path);
    ext(b, p, &s.ext);
    fk_spec_free(&s);
    return 0;
}

static void execution(fk_buf *b, const char *path, const fk_exec *e) {
    char p[256];
    PATH(p, "%s.status", path);
    num(b, p, e->status);
    PATH(p, "%s.exitCode", path);
    num(b, p, e->exit_code);
    PATH(p, "%s.flags", path);
    num(b, p, e->flags);
    PATH(p, "%s.startedMicros", path);
    num(b, p, e->started_us);
    PATH(p, "%s.finishedMicros", path);
    num(b, p, e->finished_us);
    PATH(p, "%s.stdout", path);
    quoted(b, p, &e->out);
    PATH(p, "%s.stderr", path);
    quoted(b, p, &e->err);
    PATH(p, "%s.detail", path);
    quoted(b, p, &e->detail);
    PATH(p, "%s.ext", path);
    ext(b, p, &e->ext);
}

int fk_dump(const fk_msg *m, fk_buf *b) {
    char p[256];
    key(b, "type");
    const char *name = fk_type_name(m->type);
    put(b, name ? name : "?");
    put(b, "\n");
    switch (m->type) {
    case FK_HELLO:
        unum(b, "magic", m->u.hello.magic);
        num(b, "version", m->u.hello.version);
        num(b, "role", m->u.hello.role);
        quoted(b, "token", &m->u.hello.token);
        quoted(b, "agent", &m->u.hello.agent);
        break;
    case FK_WELCOME:
        num(b, "version", m->u.welcome.version);
        num(b, "heartbeatMillis", m->u.welcome.heartbeat_ms);
        num(b, "maxFrameLength", m->u.welcome.max_frame);
        quoted(b, "dispatcherId", &m->u.welcome.dispatcher_id);
        break;
    case FK_HEARTBEAT:
        num(b, "timeMicros", m->u.heartbeat.time_us);
        break;
    case FK_ERROR:
        num(b, "requestId", m->u.error.request_id);
        num(b, "code", m->u.error.code);
        quoted(b, "message", &m->u.error.message);
        break;
    case FK_REGISTER:
        quoted(b, "executorId", &m->u.reg.id);
        quoted(b, "host", &m->u.reg.host);
        num(b, "slots", m->u.reg.slots);
        unum(b, "flags", m->u.reg.flags);
        num(b, "attributes.count", (int64_t)m->u.reg.attrs.n);
        for (size_t i = 0; i < m->u.reg.attrs.n; i++) {
            PATH(p, "attributes[%zu].key", i);
            quoted(b, p, &m->u.reg.attrs.items[i].key);
            PATH(p, "attributes[%zu].value", i);
            quoted(b, p, &m->u.reg.attrs.items[i].value);
        }
        break;
    case FK_CREDIT:
        num(b, "credits", m->u.credit.credits);
        break;
    case FK_DISPATCH:
        num(b, "tasks.count", (int64_t)m->u.dispatch.n);
        for (size_t i = 0; i < m->u.dispatch.n; i++) {
            const fk_dtask *t = &m->u.dispatch.tasks[i];
            char q[64];
            PATH(p, "tasks[%zu].taskId", i);
            unum(b, p, t->task_id);
            PATH(p, "tasks[%zu].attempt", i);
            num(b, p, t->attempt);
            PATH(q, "tasks[%zu].spec", i);
            if (spec(b, q, &t->spec) != 0) {
                return -1;
            }
            PATH(q, "tasks[%zu].ext", i);
            ext(b, q, &t->ext);
        }
        break;
    case FK_RESULT:
        num(b, "credits", m->u.result.credits);
        num(b, "results.count", (int64_t)m->u.result.n);
        for (size_t i = 0; i < m->u.result.n; i++) {
            const fk_tresult *r = &m->u.result.results[i];
            char q[64];
            PATH(p, "results[%zu].taskId", i);
            unum(b, p, r->task_id);
            PATH(p, "results[%zu].attempt", i);
            num(b, p, r->attempt);
            PATH(q, "results[%zu].execution", i);
            execution(b, q, &r->exec);
        }
        break;
    case FK_CANCEL:
        num(b, "taskIds.count", (int64_t)m->u.cancel.n);
        for (size_t i = 0; i < m->u.cancel.n; i++) {
            PATH(p, "taskIds[%zu]", i);
            unum(b, p, m->u.cancel.ids[i]);
        }
        break;
    case FK_REPLICATE:
        num(b, "objects.count", (int64_t)m->u.replicate.n);
        for (size_t i = 0; i < m->u.replicate.n; i++) {
            const fk_replica *x = &m->u.replicate.objects[i];
            PATH(p, "objects[%zu].id", i);
            quoted(b, p, &x->ref.id);
            PATH(p, "objects[%zu].source", i);
            quoted(b, p, &x->ref.source);
            PATH(p, "objects[%zu].size", i);
            num(b, p, x->ref.size);
            PATH(p, "objects[%zu].checksum", i);
            quoted(b, p, &x->ref.checksum);
            PATH(p, "objects[%zu].peers.count", i);
            num(b, p, (int64_t)x->npeers);
            for (size_t k = 0; k < x->npeers; k++) {
                PATH(p, "objects[%zu].peers[%zu]", i, k);
                quoted(b, p, &x->peers[k]);
            }
        }
        break;
    case FK_RELEASE:
        num(b, "ids.count", (int64_t)m->u.release.n);
        for (size_t i = 0; i < m->u.release.n; i++) {
            PATH(p, "ids[%zu]", i);
            quoted(b, p, &m->u.release.ids[i]);
        }
        break;
    case FK_CACHE_UPDATE:
        num(b, "full", m->u.cache.full);
        num(b, "added.count", (int64_t)m->u.cache.nadded);
        for (size_t i = 0; i < m->u.cache.nadded; i++) {
            PATH(p, "added[%zu].id", i);
            quoted(b, p, &m->u.cache.added[i].id);
            PATH(p, "added[%zu].size", i);
            num(b, p, m->u.cache.added[i].size);
        }
        num(b, "removed.count", (int64_t)m->u.cache.nremoved);
        for (size_t i = 0; i < m->u.cache.nremoved; i++) {
            PATH(p, "removed[%zu]", i);
            quoted(b, p, &m->u.cache.removed[i]);
        }
        break;
    default:
        break;
    }
    return 0;
}
