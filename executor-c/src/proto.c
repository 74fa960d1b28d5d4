#include "proto.h"

#include "names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "falkon-executor-c: out of memory\n");
        abort();
    }
    return p;
}

fk_str fk_str_dup(const char *s, size_t len) {
    fk_str out;
    out.s = malloc(len + 1);
    if (!out.s) {
        abort();
    }
    if (len) {
        memcpy(out.s, s, len);
    }
    out.s[len] = 0;
    out.len = len;
    return out;
}

fk_str fk_str_of(const char *s) {
    return fk_str_dup(s, strlen(s));
}

void fk_str_free(fk_str *s) {
    free(s->s);
    s->s = NULL;
    s->len = 0;
}

static fk_str rd_str(fk_reader *r, const char *field) {
    fk_str s;
    s.s = fk_rd_str(r, field, &s.len);
    if (!s.s) {
        s = fk_str_dup("", 0);
    }
    return s;
}

static void wr_str(fk_buf *b, const fk_str *s) {
    fk_buf_blob(b, s->s, s->len);
}

void fk_ext_list_free(fk_ext_list *l) {
    for (size_t i = 0; i < l->n; i++) {
        fk_str_free(&l->items[i].value);
    }
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

static void rd_ext(fk_reader *r, fk_ext_list *l, const char *field) {
    l->n = 0;
    l->items = NULL;
    uint16_t n = fk_rd_u16(r, field);
    if (!fk_reader_ok(r)) {
        return;
    }
    if ((size_t)n * 6 > r->left) {
        fk_reader_fail(r, "%s: count %u cannot fit", field, n);
        return;
    }
    l->items = xcalloc(n, sizeof(fk_ext));
    for (uint16_t i = 0; i < n && fk_reader_ok(r); i++) {
        l->items[i].tag = fk_rd_u16(r, field);
        l->items[i].value = rd_str(r, field);
        l->n = i + 1u;
    }
}

static void wr_ext(fk_buf *b, const fk_ext_list *l) {
    fk_buf_u16(b, (uint16_t)l->n);
    for (size_t i = 0; i < l->n; i++) {
        fk_buf_u16(b, l->items[i].tag);
        wr_str(b, &l->items[i].value);
    }
}

const fk_ext *fk_ext_find(const fk_ext_list *l, uint16_t tag) {
    for (size_t i = 0; i < l->n; i++) {
        if (l->items[i].tag == tag) {
            return &l->items[i];
        }
    }
    return NULL;
}

static uint32_t cores_of(const uint8_t *v, size_t n) {
    uint32_t c = n == 8 ? fk_get_u32(v) : 1;
    return c < 1 ? 1 : c;
}

uint32_t fk_spec_cores(const fk_spec *s, int *declared) {
    const fk_ext *x = fk_ext_find(&s->ext, FK_EXT_RESOURCES);
    if (declared) {
        *declared = x != NULL && x->value.len == 8;
    }
    return x ? cores_of((const uint8_t *)x->value.s, x->value.len) : 1;
}

uint32_t fk_spec_blob_cores(const uint8_t *blob, size_t len) {
    fk_reader r;
    fk_reader_init(&r, blob, len);
    size_t n;
    uint32_t argc = fk_rd_count(&r, "argv", 4);
    for (uint32_t i = 0; i < argc && fk_reader_ok(&r); i++) {
        fk_rd_blob(&r, "argv", &n);
    }
    uint32_t envc = fk_rd_count(&r, "env", 8);
    for (uint32_t i = 0; i < envc && fk_reader_ok(&r); i++) {
        fk_rd_blob(&r, "env key", &n);
        fk_rd_blob(&r, "env value", &n);
    }
    fk_rd_blob(&r, "workDir", &n);
    fk_rd_u32(&r, "wallTimeMillis");
    uint16_t extc = fk_rd_u16(&r, "ext");
    for (uint16_t i = 0; i < extc && fk_reader_ok(&r); i++) {
        uint16_t tag = fk_rd_u16(&r, "ext tag");
        const uint8_t *v = fk_rd_blob(&r, "ext value", &n);
        if (tag == FK_EXT_RESOURCES && v) {
            return cores_of(v, n);
        }
    }
    return 1;
}

static void rd_map(fk_reader *r, fk_map *m, const char *field) {
    m->n = 0;
    m->items = NULL;
    uint32_t n = fk_rd_count(r, field, 8);
    if (!fk_reader_ok(r)) {
        return;
    }
    m->items = xcalloc(n, sizeof(fk_kv));
    for (uint32_t i = 0; i < n && fk_reader_ok(r); i++) {
        m->items[i].key = rd_str(r, field);
        m->items[i].value = rd_str(r, field);
        m->n = i + 1u;
        for (uint32_t k = 0; k < i; k++) {
            if (m->items[k].key.len == m->items[i].key.len
                && memcmp(m->items[k].key.s, m->items[i].key.s, m->items[i].key.len) == 0) {
                fk_reader_fail(r, "%s: duplicate key '%s'", field, m->items[i].key.s);
            }
        }
    }
}

static void free_map(fk_map *m) {
    for (size_t i = 0; i < m->n; i++) {
        fk_str_free(&m->items[i].key);
        fk_str_free(&m->items[i].value);
    }
    free(m->items);
    m->items = NULL;
    m->n = 0;
}

static void wr_map(fk_buf *b, const fk_map *m) {
    fk_buf_u32(b, (uint32_t)m->n);
    for (size_t i = 0; i < m->n; i++) {
        wr_str(b, &m->items[i].key);
        wr_str(b, &m->items[i].value);
    }
}

void fk_exec_free(fk_exec *e) {
    fk_str_free(&e->out);
    fk_str_free(&e->err);
    fk_str_free(&e->detail);
    fk_ext_list_free(&e->ext);
}

static void rd_exec(fk_reader *r, fk_exec *e) {
    memset(e, 0, sizeof *e);
    e->status = fk_rd_u8(r, "execution.status");
    if (fk_reader_ok(r) && e->status > FK_FETCH_FAILED) {
        fk_reader_fail(r, "execution.status: unknown value %u", e->status);
    }
    e->exit_code = (int32_t)fk_rd_u32(r, "execution.exitCode");
    e->flags = fk_rd_u8(r, "execution.flags");
    e->started_us = (int64_t)fk_rd_u64(r, "execution.startedMicros");
    e->finished_us = (int64_t)fk_rd_u64(r, "execution.finishedMicros");
    e->out = rd_str(r, "execution.stdout");
    e->err = rd_str(r, "execution.stderr");
    e->detail = rd_str(r, "execution.detail");
    rd_ext(r, &e->ext, "execution.ext");
}

static void wr_exec(fk_buf *b, const fk_exec *e) {
    fk_buf_u8(b, e->status);
    fk_buf_u32(b, (uint32_t)e->exit_code);
    fk_buf_u8(b, e->flags);
    fk_buf_u64(b, (uint64_t)e->started_us);
    fk_buf_u64(b, (uint64_t)e->finished_us);
    wr_str(b, &e->out);
    wr_str(b, &e->err);
    wr_str(b, &e->detail);
    wr_ext(b, &e->ext);
}

void fk_spec_free(fk_spec *s) {
    for (size_t i = 0; i < s->argc; i++) {
        fk_str_free(&s->argv[i]);
    }
    free(s->argv);
    free_map(&s->env);
    fk_str_free(&s->workdir);
    fk_ext_list_free(&s->ext);
    memset(s, 0, sizeof *s);
}

int fk_spec_decode(const uint8_t *blob, size_t len, fk_spec *s, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    fk_reader r;
    fk_reader_init(&r, blob, len);
    uint32_t argc = fk_rd_count(&r, "argv", 4);
    s->argv = xcalloc(argc, sizeof(fk_str));
    for (uint32_t i = 0; i < argc && fk_reader_ok(&r); i++) {
        s->argv[i] = rd_str(&r, "argv");
        s->argc = i + 1u;
    }
    rd_map(&r, &s->env, "env");
    s->workdir = rd_str(&r, "workDir");
    s->wall_ms = fk_rd_u32(&r, "wallTimeMillis");
    rd_ext(&r, &s->ext, "ext");
    fk_rd_end(&r, "spec");
    if (fk_reader_ok(&r) && (s->argc == 0 || s->argv[0].len == 0)) {
        fk_reader_fail(&r, s->argc == 0 ? "argv is empty (a task needs a command)" : "argv[0] (the command) is empty");
    }
    if (!fk_reader_ok(&r)) {
        snprintf(err, errlen, "%s", r.err);
        fk_spec_free(s);
        return -1;
    }
    return 0;
}

void fk_msg_free(fk_msg *m) {
    switch (m->type) {
    case FK_HELLO:
        fk_str_free(&m->u.hello.token);
        fk_str_free(&m->u.hello.agent);
        break;
    case FK_WELCOME:
        fk_str_free(&m->u.welcome.dispatcher_id);
        break;
    case FK_ERROR:
        fk_str_free(&m->u.error.message);
        break;
    case FK_REGISTER:
        fk_str_free(&m->u.reg.id);
        fk_str_free(&m->u.reg.host);
        free_map(&m->u.reg.attrs);
        break;
    case FK_DISPATCH:
        for (size_t i = 0; i < m->u.dispatch.n; i++) {
            fk_str_free(&m->u.dispatch.tasks[i].spec);
            fk_ext_list_free(&m->u.dispatch.tasks[i].ext);
        }
        free(m->u.dispatch.tasks);
        break;
    case FK_RESULT:
        for (size_t i = 0; i < m->u.result.n; i++) {
            fk_exec_free(&m->u.result.results[i].exec);
        }
        free(m->u.result.results);
        break;
    case FK_CANCEL:
        free(m->u.cancel.ids);
        break;
    case FK_RELEASE:
        for (size_t i = 0; i < m->u.release.n; i++) {
            fk_str_free(&m->u.release.ids[i]);
        }
        free(m->u.release.ids);
        break;
    case FK_REPLICATE:
        for (size_t i = 0; i < m->u.replicate.n; i++) {
            fk_replica *x = &m->u.replicate.objects[i];
            fk_str_free(&x->ref.id);
            fk_str_free(&x->ref.source);
            fk_str_free(&x->ref.checksum);
            fk_str_free(&x->ref.name);
            for (size_t k = 0; k < x->npeers; k++) {
                fk_str_free(&x->peers[k]);
            }
            free(x->peers);
        }
        free(m->u.replicate.objects);
        break;
    case FK_CACHE_UPDATE:
        for (size_t i = 0; i < m->u.cache.nadded; i++) {
            fk_str_free(&m->u.cache.added[i].id);
        }
        free(m->u.cache.added);
        for (size_t i = 0; i < m->u.cache.nremoved; i++) {
            fk_str_free(&m->u.cache.removed[i]);
        }
        free(m->u.cache.removed);
        break;
    default:
        break;
    }
    m->type = 0;
}

const char *fk_type_name(int t) {
    switch (t) {
    case FK_HELLO: return "HELLO";
    case FK_WELCOME: return "WELCOME";
    case FK_HEARTBEAT: return "HEARTBEAT";
    case FK_ERROR: return "ERROR";
    case FK_REGISTER: return "REGISTER";
    case FK_CREDIT: return "CREDIT";
    case FK_DISPATCH: return "DISPATCH";
    case FK_RESULT: return "RESULT";
    case FK_CANCEL: return "CANCEL";
    case FK_CACHE_UPDATE: return "CACHE_UPDATE";
    case FK_RELEASE: return "RELEASE";
    case FK_REPLICATE: return "REPLICATE";
    default: return NULL;
    }
}

int fk_decode(const uint8_t *body, size_t len, fk_msg *m, char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    fk_reader r;
    fk_reader_init(&r, body, len);
    int t = fk_rd_u8(&r, "type");
    if (!fk_reader_ok(&r)) {
        snprintf(err, errlen, "%s", r.err);
        return -1;
    }
    const char *name = fk_type_name(t);
    if (!name) {
        snprintf(err, errlen, "unknown message type 0x%x", t);
        return -1;
    }
    m->type = t;
    switch (t) {
    case FK_HELLO:
        m->u.hello.magic = fk_rd_u32(&r, "magic");
        if (fk_reader_ok(&r) && m->u.hello.magic != FK_MAGIC) {
            fk_reader_fail(&r, "magic: 0x%x is not 0x46414c4b (\"FALK\")", m->u.hello.magic);
        }
        m->u.hello.version = fk_rd_u16(&r, "version");
        m->u.hello.role = fk_rd_u8(&r, "role");
        m->u.hello.token = rd_str(&r, "token");
        m->u.hello.agent = rd_str(&r, "agent");
        break;
    case FK_WELCOME:
        m->u.welcome.version = fk_rd_u16(&r, "version");
        m->u.welcome.heartbeat_ms = fk_rd_u32(&r, "heartbeatMillis");
        m->u.welcome.max_frame = fk_rd_u31(&r, "maxFrameLength");
        m->u.welcome.dispatcher_id = rd_str(&r, "dispatcherId");
        break;
    case FK_HEARTBEAT:
        m->u.heartbeat.time_us = (int64_t)fk_rd_u64(&r, "timeMicros");
        break;
    case FK_ERROR:
        m->u.error.request_id = fk_rd_u32(&r, "requestId");
        m->u.error.code = fk_rd_u16(&r, "code");
        m->u.error.message = rd_str(&r, "message");
        break;
    case FK_REGISTER:
        m->u.reg.id = rd_str(&r, "executorId");
        m->u.reg.host = rd_str(&r, "host");
        m->u.reg.slots = fk_rd_u31(&r, "slots");
        m->u.reg.flags = fk_rd_u32(&r, "flags");
        rd_map(&r, &m->u.reg.attrs, "attributes");
        break;
    case FK_CREDIT:
        m->u.credit.credits = fk_rd_u31(&r, "credits");
        break;
    case FK_DISPATCH: {
        uint32_t n = fk_rd_count(&r, "tasks", 22);
        m->u.dispatch.tasks = xcalloc(n, sizeof(fk_dtask));
        for (uint32_t i = 0; i < n && fk_reader_ok(&r); i++) {
            fk_dtask *d = &m->u.dispatch.tasks[i];
            d->task_id = fk_rd_u64(&r, "taskId");
            d->attempt = fk_rd_u31(&r, "attempt");
            d->spec = rd_str(&r, "spec");
            rd_ext(&r, &d->ext, "ext");
            m->u.dispatch.n = i + 1u;
        }
        break;
    }
    case FK_RESULT: {
        m->u.result.credits = fk_rd_u31(&r, "credits");
        uint32_t n = fk_rd_count(&r, "results", 12);
        m->u.result.results = xcalloc(n, sizeof(fk_tresult));
        for (uint32_t i = 0; i < n && fk_reader_ok(&r); i++) {
            fk_tresult *x = &m->u.result.results[i];
            x->task_id = fk_rd_u64(&r, "taskId");
            x->attempt = fk_rd_u31(&r, "attempt");
            rd_exec(&r, &x->exec);
            m->u.result.n = i + 1u;
        }
        break;
    }
    case FK_CANCEL: {
        uint32_t n = fk_rd_count(&r, "taskIds", 8);
        m->u.cancel.ids = xcalloc(n, sizeof(uint64_t));
        for (uint32_t i = 0; i < n && fk_reader_ok(&r); i++) {
            m->u.cancel.ids[i] = fk_rd_u64(&r, "taskIds");
            m->u.cancel.n = i + 1u;
        }
        break;
    }
    case FK_REPLICATE: {
        uint32_t n = fk_rd_count(&r, "objects", 24);
        m->u.replicate.objects = xcalloc(n, sizeof(fk_replica));
        for (uint32_t i = 0; i < n && fk_reader_ok(&r); i++) {
            fk_replica *x = &m->u.replicate.objects[i];
            m->u.replicate.n = i + 1u;
            x->ref.id = rd_str(&r, "objects.id");
            x->ref.source = rd_str(&r, "objects.source");
            x->ref.size = (int64_t)fk_rd_u64(&r, "objects.size");
            x->ref.checksum = rd_str(&r, "objects.checksum");
            x->ref.name = fk_str_of("");
            uint32_t k = fk_rd_count(&r, "objects.peers", 4);
            x->peers = xcalloc(k, sizeof(fk_str));
            for (uint32_t j = 0; j < k && fk_reader_ok(&r); j++) {
                x->peers[j] = rd_str(&r, "objects.peers");
                x->npeers = j + 1u;
            }
        }
        break;
    }
    case FK_RELEASE: {
        uint32_t n = fk_rd_count(&r, "ids", 4);
        m->u.release.ids = xcalloc(n, sizeof(fk_str));
        for (uint32_t i = 0; i < n && fk_reader_ok(&r); i++) {
            m->u.release.ids[i] = rd_str(&r, "ids");
            m->u.release.n = i + 1u;
        }
        break;
    }
    case FK_CACHE_UPDATE: {
        m->u.cache.full = fk_rd_u8(&r, "full");
        if (fk_reader_ok(&r) && m->u.cache.full > 1) {
            fk_reader_fail(&r, "full: must be 0 or 1, got %u", m->u.cache.full);
        }
        uint32_t n = fk_rd_count(&r, "added", 12);
        m->u.cache.added = xcalloc(n, sizeof(fk_cached));
        for (uint32_t i = 0; i < n && fk_reader_ok(&r); i++) {
            m->u.cache.added[i].id = rd_str(&r, "added.id");
            m->u.cache.added[i].size = (int64_t)fk_rd_u64(&r, "added.size");
            m->u.cache.nadded = i + 1u;
        }
        uint32_t k = fk_rd_count(&r, "removed", 4);
        m->u.cache.removed = xcalloc(k, sizeof(fk_str));
        for (uint32_t i = 0; i < k && fk_reader_ok(&r); i++) {
            m->u.cache.removed[i] = rd_str(&r, "removed");
            m->u.cache.nremoved = i + 1u;
        }
        break;
    }
    default:
        break;
    }
    fk_rd_end(&r, name);
    if (!fk_reader_ok(&r)) {
        snprintf(err, errlen, "%s.%s", name, r.err);
        fk_msg_free(m);
        return -1;
    }
    return 0;
}

void fk_encode(const fk_msg *m, fk_buf *b) {
    size_t at = b->len;
    fk_buf_u32(b, 0);
    fk_buf_u8(b, (uint8_t)m->type);
    switch (m->type) {
    case FK_HELLO:
        fk_buf_u32(b, m->u.hello.magic);
        fk_buf_u16(b, m->u.hello.version);
        fk_buf_u8(b, m->u.hello.role);
        wr_str(b, &m->u.hello.token);
        wr_str(b, &m->u.hello.agent);
        break;
    case FK_WELCOME:
        fk_buf_u16(b, m->u.welcome.version);
        fk_buf_u32(b, m->u.welcome.heartbeat_ms);
        fk_buf_u32(b, m->u.welcome.max_frame);
        wr_str(b, &m->u.welcome.dispatcher_id);
        break;
    case FK_HEARTBEAT:
        fk_buf_u64(b, (uint64_t)m->u.heartbeat.time_us);
        break;
    case FK_ERROR:
        fk_buf_u32(b, m->u.error.request_id);
        fk_buf_u16(b, m->u.error.code);
        wr_str(b, &m->u.error.message);
        break;
    case FK_REGISTER:
        wr_str(b, &m->u.reg.id);
        wr_str(b, &m->u.reg.host);
        fk_buf_u32(b, m->u.reg.slots);
        fk_buf_u32(b, m->u.reg.flags);
        wr_map(b, &m->u.reg.attrs);
        break;
    case FK_CREDIT:
        fk_buf_u32(b, m->u.credit.credits);
        break;
    case FK_DISPATCH:
        fk_buf_u32(b, (uint32_t)m->u.dispatch.n);
        for (size_t i = 0; i < m->u.dispatch.n; i++) {
            const fk_dtask *d = &m->u.dispatch.tasks[i];
            fk_buf_u64(b, d->task_id);
            fk_buf_u32(b, d->attempt);
            wr_str(b, &d->spec);
            wr_ext(b, &d->ext);
        }
        break;
    case FK_RESULT:
        fk_buf_u32(b, m->u.result.credits);
        fk_buf_u32(b, (uint32_t)m->u.result.n);
        for (size_t i = 0; i < m->u.result.n; i++) {
            fk_buf_u64(b, m->u.result.results[i].task_id);
            fk_buf_u32(b, m->u.result.results[i].attempt);
            wr_exec(b, &m->u.result.results[i].exec);
        }
        break;
    case FK_CANCEL:
        fk_buf_u32(b, (uint32_t)m->u.cancel.n);
        for (size_t i = 0; i < m->u.cancel.n; i++) {
            fk_buf_u64(b, m->u.cancel.ids[i]);
        }
        break;
    case FK_REPLICATE:
        fk_buf_u32(b, (uint32_t)m->u.replicate.n);
        for (size_t i = 0; i < m->u.replicate.n; i++) {
            const fk_replica *x = &m->u.replicate.objects[i];
            wr_str(b, &x->ref.id);
            wr_str(b, &x->ref.source);
            fk_buf_u64(b, (uint64_t)x->ref.size);
            wr_str(b, &x->ref.checksum);
            fk_buf_u32(b, (uint32_t)x->npeers);
            for (size_t k = 0; k < x->npeers; k++) {
                wr_str(b, &x->peers[k]);
            }
        }
        break;
    case FK_RELEASE:
        fk_buf_u32(b, (uint32_t)m->u.release.n);
        for (size_t i = 0; i < m->u.release.n; i++) {
            wr_str(b, &m->u.release.ids[i]);
        }
        break;
    case FK_CACHE_UPDATE:
        fk_buf_u8(b, m->u.cache.full);
        fk_buf_u32(b, (uint32_t)m->u.cache.nadded);
        for (size_t i = 0; i < m->u.cache.nadded; i++) {
            wr_str(b, &m->u.cache.added[i].id);
            fk_buf_u64(b, (uint64_t)m->u.cache.added[i].size);
        }
        fk_buf_u32(b, (uint32_t)m->u.cache.nremoved);
        for (size_t i = 0; i < m->u.cache.nremoved; i++) {
            wr_str(b, &m->u.cache.removed[i]);
        }
        break;
    default:
        break;
    }
    fk_buf_set_u32(b, at, (uint32_t)(b->len - at - 4));
}

void fk_inputs_free(fk_input *in, size_t n) {
    for (size_t i = 0; i < n; i++) {
        fk_str_free(&in[i].id);
        fk_str_free(&in[i].source);
        fk_str_free(&in[i].checksum);
        fk_str_free(&in[i].name);
    }
    free(in);
}

/* As TaskInput's rule: empty, a plain file name, or a plain directory name and one slash ("diffs/");
 * never "." or "..". */
/* Whether a source (a store path or a URL) has a control character: a NUL would cut it short in C. */
static int has_control(const fk_str *s) {
    for (size_t i = 0; i < s->len; i++) {
        if ((unsigned char)s->s[i] < 0x20 || s->s[i] == 0x7f) {
            return 1;
        }
    }
    return 0;
}

int fk_inputs_decode(const fk_str *value, fk_input **out, size_t *count, char *err, size_t errlen) {
    fk_reader r;
    fk_reader_init(&r, (const uint8_t *)value->s, value->len);
    uint16_t n = fk_rd_u16(&r, "inputs count");
    fk_input *in = xcalloc(n, sizeof(fk_input));
    size_t done = 0;
    for (uint16_t i = 0; i < n && fk_reader_ok(&r); i++) {
        in[i].id = rd_str(&r, "inputs.id");
        in[i].source = rd_str(&r, "inputs.source");
        in[i].size = (int64_t)fk_rd_u64(&r, "inputs.size");
        in[i].checksum = rd_str(&r, "inputs.checksum");
        in[i].unpack = fk_rd_u8(&r, "inputs.unpack");
        in[i].name = rd_str(&r, "inputs.name");
        done = i + 1u;
        char why[160];
        if (!fk_reader_ok(&r)) {
            break;
        }
        if (fk_id_check(in[i].id.s, in[i].id.len, why, sizeof why) != 0) {
            fk_reader_fail(&r, "inputs[%u].id: %s", i, why);
        } else if (fk_input_name_check(in[i].name.s, in[i].name.len, why, sizeof why) != 0) {
            fk_reader_fail(&r, "inputs[%u].name: %s", i, why);
        } else if (in[i].unpack > 3) {
            fk_reader_fail(&r, "inputs[%u]: unpack must be 0..3, got %u", i, in[i].unpack);
        } else if (has_control(&in[i].source)) {
            fk_reader_fail(&r, "inputs[%u].source: a source must not hold control characters (NUL, newline, ...)", i);
        }
    }
    fk_rd_end(&r, "inputs");
    if (!fk_reader_ok(&r)) {
        snprintf(err, errlen, "%s", r.err);
        fk_inputs_free(in, done);
        return -1;
    }
    *out = in;
    *count = n;
    return 0;
}

void fk_outputs_free(fk_output *o, size_t n) {
    for (size_t i = 0; i < n; i++) {
        fk_str_free(&o[i].path);
        fk_str_free(&o[i].id);
    }
    free(o);
}

int fk_outputs_decode(const fk_str *value, fk_output **out, size_t *count, char *err, size_t errlen) {
    fk_reader r;
    fk_reader_init(&r, (const uint8_t *)value->s, value->len);
    uint16_t n = fk_rd_u16(&r, "outputs count");
    fk_output *o = xcalloc(n, sizeof(fk_output));
    size_t done = 0;
    for (uint16_t i = 0; i < n && fk_reader_ok(&r); i++) {
        o[i].path = rd_str(&r, "outputs.path");
        o[i].id = rd_str(&r, "outputs.id");
        done = i + 1u;
        char why[160];
        if (!fk_reader_ok(&r)) {
            break;
        }
        if (fk_output_path_check(o[i].path.s, o[i].path.len, why, sizeof why) != 0) {
            fk_reader_fail(&r, "outputs[%u].path: %s", i, why);
        } else if (fk_id_check(o[i].id.s, o[i].id.len, why, sizeof why) != 0) {
            fk_reader_fail(&r, "outputs[%u].id: %s", i, why);
        }
    }
    fk_rd_end(&r, "outputs");
    if (!fk_reader_ok(&r)) {
        snprintf(err, errlen, "%s", r.err);
        fk_outputs_free(o, done);
        return -1;
    }
    *out = o;
    *count = n;
    return 0;
}

/* The indexes of a marks field (TEMPORARY, ARCHIVE, READ_ONLY): count:u16 (index:u16)*, each below n,
 * ascending, each once; flags[i] set for each. 0, or -1 with err. */
static int marks_decode(const fk_str *value, size_t n, const char *field, const char *noun, uint8_t *flags,
                        char *err, size_t errlen) {
    fk_reader r;
    fk_reader_init(&r, (const uint8_t *)value->s, value->len);
    uint16_t k = fk_rd_u16(&r, "marked count");
    long last = -1;
    for (uint16_t i = 0; i < k && fk_reader_ok(&r); i++) {
        uint16_t at = fk_rd_u16(&r, field);
        if (!fk_reader_ok(&r)) {
            break;
        }
        if (at >= n || (long)at <= last) {
            snprintf(err, errlen, "%s[%u]: %s %u %s", field, i, noun, at,
                     at >= n ? "does not exist" : "is out of order or repeated");
            return -1;
        }
        flags[at] = 1;
        last = at;
    }
    fk_rd_end(&r, field);
    if (!fk_reader_ok(&r)) {
        snprintf(err, errlen, "%s", r.err);
        return -1;
    }
    return 0;
}

int fk_output_marks_decode(const fk_str *value, fk_output *outs, size_t n, int archive, char *err, size_t errlen) {
    uint8_t *flags = calloc(n ? n : 1, 1);
    if (!flags) {
        abort();
    }
    int rc = marks_decode(value, n, archive ? "archive" : "temporary", "output", flags, err, errlen);
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (flags[i] && (archive ? outs[i].temporary : outs[i].archived)) {
            snprintf(err, errlen, "outputs[%zu] is marked both temporary and archived", i);
            rc = -1;
        }
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (flags[i]) {
            if (archive) {
                outs[i].archived = 1;
            } else {
                outs[i].temporary = 1;
            }
        }
    }
    free(flags);
    return rc;
}

int fk_input_marks_decode(const fk_str *value, fk_input *ins, size_t n, char *err, size_t errlen) {
    uint8_t *flags = calloc(n ? n : 1, 1);
    if (!flags) {
        abort();
    }
    int rc = marks_decode(value, n, "readOnly", "input", flags, err, errlen);
    for (size_t i = 0; i < n && rc == 0; i++) {
        ins[i].read_only = flags[i];
    }
    free(flags);
    return rc;
}

void fk_hints_free(fk_hint *h, size_t n) {
    for (size_t i = 0; i < n; i++) {
        fk_str_free(&h[i].id);
        for (size_t k = 0; k < h[i].npeers; k++) {
            fk_str_free(&h[i].peers[k]);
        }
        free(h[i].peers);
    }
    free(h);
}

int fk_hints_decode(const fk_str *value, fk_hint **out, size_t *count, char *err, size_t errlen) {
    fk_reader r;
    fk_reader_init(&r, (const uint8_t *)value->s, value->len);
    uint16_t n = fk_rd_u16(&r, "hints count");
    fk_hint *h = xcalloc(n, sizeof(fk_hint));
    size_t done = 0;
    for (uint16_t i = 0; i < n && fk_reader_ok(&r); i++) {
        h[i].id = rd_str(&r, "hints.id");
        uint16_t m = fk_rd_u16(&r, "hints.peers");
        h[i].peers = xcalloc(m, sizeof(fk_str));
        for (uint16_t k = 0; k < m && fk_reader_ok(&r); k++) {
            h[i].peers[k] = rd_str(&r, "hints.peer");
            h[i].npeers = k + 1u;
        }
        done = i + 1u;
    }
    fk_rd_end(&r, "hints");
    if (!fk_reader_ok(&r)) {
        snprintf(err, errlen, "%s", r.err);
        fk_hints_free(h, done);
        return -1;
    }
    *out = h;
    *count = n;
    return 0;
}

void fk_stats_encode(const fk_data_stats *s, fk_buf *b) {
    fk_buf_u32(b, (uint32_t)s->local_hits);
    fk_buf_u32(b, (uint32_t)s->peer_hits);
    fk_buf_u32(b, (uint32_t)s->misses);
    fk_buf_u64(b, s->bytes_local);
    fk_buf_u64(b, s->bytes_peer);
    fk_buf_u64(b, s->bytes_store);
    fk_buf_u32(b, (uint32_t)s->refetched);
    fk_buf_u64(b, s->bytes_written);
}

const char *fk_error_name(int code) {
    switch (code) {
    case FK_ERR_MALFORMED: return "MALFORMED";
    case FK_ERR_UNSUPPORTED_VERSION: return "UNSUPPORTED_VERSION";
    case FK_ERR_UNAUTHORIZED: return "UNAUTHORIZED";
    case FK_ERR_UNEXPECTED_MESSAGE: return "UNEXPECTED_MESSAGE";
    case FK_ERR_FRAME_TOO_LARGE: return "FRAME_TOO_LARGE";
    case FK_ERR_HANDSHAKE_TIMEOUT: return "HANDSHAKE_TIMEOUT";
    case FK_ERR_UNKNOWN_INSTANCE: return "UNKNOWN_INSTANCE";
    case FK_ERR_INVALID_TASK: return "INVALID_TASK";
    case FK_ERR_DUPLICATE_EXECUTOR: return "DUPLICATE_EXECUTOR";
    case FK_ERR_SHUTTING_DOWN: return "SHUTTING_DOWN";
    case FK_ERR_BUSY: return "BUSY";
    default: return "UNKNOWN";
    }
}
