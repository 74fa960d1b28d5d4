/* Named resources: what the executor offers and which devices its tasks hold (resources.h). */
#include "resources.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *rcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "falkon-executor-c: out of memory\n");
        abort();
    }
    return p;
}

/* The Java NamedResources.nameProblem's rule: [a-z][a-z0-9_]*, at most 32, not cores/memory/disk. */
static const char *name_problem(const char *s, size_t len) {
    if (len == 0 || len > FK_RESOURCE_NAME_MAX) {
        return "a resource name has 1..32 characters";
    }
    if (!(s[0] >= 'a' && s[0] <= 'z')) {
        return "a resource name is of the form [a-z][a-z0-9_]*";
    }
    for (size_t i = 1; i < len; i++) {
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_')) {
            return "a resource name is of the form [a-z][a-z0-9_]*";
        }
    }
    if ((len == 5 && !memcmp(s, "cores", 5)) || (len == 6 && !memcmp(s, "memory", 6)) ||
        (len == 4 && !memcmp(s, "disk", 4))) {
        return "cores, memory and disk are not named resources";
    }
    return NULL;
}

static int device_ok(const char *s, size_t len) {
    if (len == 0 || len > 64) {
        return 0;
    }
    for (size_t i = 0; i < len; i++) {
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.' || s[i] == ':' || s[i] == '-')) {
            return 0;
        }
    }
    return 1;
}

static fk_offer *find(fk_resources *r, const char *name) {
    for (size_t i = 0; i < r->n; i++) {
        if (!strcmp(r->items[i].name, name)) {
            return &r->items[i];
        }
    }
    return NULL;
}

/* Adds a device to o unless it is there; 0, or -1 when there are too many. */
static int add_device(fk_offer *o, const char *s, size_t len) {
    for (size_t i = 0; i < o->ndevices; i++) {
        if (strlen(o->devices[i]) == len && !memcmp(o->devices[i], s, len)) {
            return 1;
        }
    }
    if (o->ndevices == FK_DEVICES_MAX) {
        return -1;
    }
    char **d = realloc(o->devices, (o->ndevices + 1) * sizeof(char *));
    if (!d) {
        abort();
    }
    o->devices = d;
    o->devices[o->ndevices++] = strndup(s, len);
    o->amount = (int64_t)o->ndevices;
    return 0;
}

/* Frees an offer's devices (one refused half-way, or a tool's list not trusted). */
static void drop_devices(fk_offer *o) {
    for (size_t i = 0; i < o->ndevices; i++) {
        free(o->devices[i]);
    }
    free(o->devices);
    o->devices = NULL;
    o->ndevices = 0;
    o->amount = 0;
}

int fk_resources_add(fk_resources *r, const char *option, char *err, size_t errlen) {
    const char *eq = strchr(option, '=');
    if (!eq) {
        snprintf(err, errlen, "--resource %s: expected NAME=INDICES or NAME=COUNT, e.g. gpus=0,1,2,3 or license=4",
                 option);
        return -1;
    }
    size_t nlen = (size_t)(eq - option);
    const char *problem = name_problem(option, nlen);
    if (problem) {
        snprintf(err, errlen, "--resource %s: %s", option, problem);
        return -1;
    }
    if (r->n == FK_RESOURCES_MAX) {
        snprintf(err, errlen, "--resource %s: at most %d named resources", option, FK_RESOURCES_MAX);
        return -1;
    }
    char name[FK_RESOURCE_NAME_MAX + 1];
    memcpy(name, option, nlen);
    name[nlen] = 0;
    if (find(r, name)) {
        snprintf(err, errlen, "--resource %s is given twice", name);
        return -1;
    }
    fk_offer *o = &r->items[r->n];
    memset(o, 0, sizeof *o);
    memcpy(o->name, name, nlen + 1);
    const char *v = eq + 1;
    size_t vlen = strlen(v);
    int bracketed = vlen >= 2 && v[0] == '[' && v[vlen - 1] == ']';
    if (!bracketed && !strchr(v, ',')) {
        char *end;
        errno = 0;
        long long n = strtoll(v, &end, 10);
        if (!*v || *end || errno || n < 0 || n > FK_RESOURCE_AMOUNT_MAX) {
            snprintf(err, errlen, "--resource %s: '%s' is neither a count 0..%d nor a list of device indices "
                     "(one device: %s=[%s])", option, v, FK_RESOURCE_AMOUNT_MAX, name, v);
            return -1;
        }
        o->amount = n;
        r->n++;
        return 0;
    }
    const char *p = bracketed ? v + 1 : v, *stop = bracketed ? v + vlen - 1 : v + vlen;
    while (p < stop) {
        const char *c = memchr(p, ',', (size_t)(stop - p));
        const char *e = c ? c : stop;
        while (p < e && isspace((unsigned char)*p)) {
            p++;
        }
        const char *t = e;
        while (t > p && isspace((unsigned char)t[-1])) {
            t--;
        }
        if (t > p) {
            if (!device_ok(p, (size_t)(t - p))) {
                snprintf(err, errlen, "--resource %s: device '%.*s' is not an index or id ([A-Za-z0-9_.:-], at "
                         "most 64 characters)", option, (int)(t - p), p);
                drop_devices(o);
                return -1;
            }
            int added = add_device(o, p, (size_t)(t - p));
            if (added != 0) {
                snprintf(err, errlen, added > 0 ? "--resource %s: a device is given twice"
                         : "--resource %s: too many devices", option);
                drop_devices(o);
                return -1;
            }
        }
        p = c ? c + 1 : stop;
    }
    if (!o->devices) {
        o->devices = rcalloc(1, sizeof(char *)); /* "gpus=[]": devices, none of them */
    }
    r->n++;
    return 0;
}

/* A visible-devices variable's devices (up to the first that hides the rest: -1, NoDevFiles). */
static void from_variable(fk_offer *o, const char *v) {
    const char *p = v;
    while (*p) {
        size_t len = strcspn(p, ",");
        if (len == 0 || p[0] == '-' || (len == 10 && !memcmp(p, "NoDevFiles", 10)) || !device_ok(p, len)) {
            break;
        }
        add_device(o, p, len);
        p += len;
        if (*p == ',') {
            p++;
        }
    }
}

int fk_on_path(const char *tool) {
    const char *path = getenv("PATH");
    char dir[4096];
    if (!path) {
        path = "/bin:/usr/bin"; /* what sh searches without one */
    }
    for (const char *p = path;; p++) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        /* an empty entry is the current directory, as for sh */
        int n = len == 0 ? snprintf(dir, sizeof dir, "./%s", tool)
                         : snprintf(dir, sizeof dir, "%.*s/%s", (int)len, p, tool);
        if (n > 0 && (size_t)n < sizeof dir && access(dir, X_OK) == 0) {
            return 1;
        }
        if (!end) {
            return 0;
        }
        p = end;
    }
}

/* The indices a vendor's tool lists: the numbers after prefix at the start of its lines. The tool
 * is looked for on PATH first: a node without it (most nodes, and every short `falkon run` on a
 * laptop) then starts no shell, which took 5-10 ms of the executor's start before it could
 * register (docs/benchmarks.md, "The last places a peer is faster (issue 58): a third pass"). */
static void from_tool(fk_offer *o, const char *tool, const char *cmd, const char *prefix) {
    if (!fk_on_path(tool)) {
        return;
    }
    FILE *f = popen(cmd, "r");
    if (!f) {
        return;
    }
    char line[512];
    size_t plen = strlen(prefix);
    while (fgets(line, sizeof line, f)) {
        const char *s = line;
        while (isspace((unsigned char)*s)) {
            s++;
        }
        if (strncmp(s, prefix, plen) || !isdigit((unsigned char)s[plen])) {
            continue;
        }
        size_t len = strspn(s + plen, "0123456789");
        add_device(o, s + plen, len);
    }
    if (pclose(f) != 0) {
        drop_devices(o); /* the tool failed: what it listed is not trusted */
    }
}

static int by_name(const void *a, const void *b) {
    return strcmp(((const fk_offer *)a)->name, ((const fk_offer *)b)->name);
}

void fk_resources_ready(fk_resources *r, int slots) {
    if (!find(r, "gpus") && r->n < FK_RESOURCES_MAX) {
        fk_offer *o = &r->items[r->n];
        memset(o, 0, sizeof *o);
        strcpy(o->name, "gpus");
        const char *cuda = getenv("CUDA_VISIBLE_DEVICES"), *rocr = getenv("ROCR_VISIBLE_DEVICES");
        if (cuda) {
            from_variable(o, cuda);
        } else if (rocr) {
            from_variable(o, rocr);
            o->amd = 1;
        } else {
            from_tool(o, "nvidia-smi", "nvidia-smi -L 2>/dev/null </dev/null", "GPU ");
            if (!o->ndevices) {
                from_tool(o, "rocm-smi", "rocm-smi --showid 2>/dev/null </dev/null", "GPU[");
                o->amd = o->ndevices > 0;
            }
        }
        if (o->ndevices) {
            r->n++;
        } else {
            free(o->devices);
            memset(o, 0, sizeof *o);
        }
    }
    /* offers of none are left out: gpus=0 is how a user turns the finding off */
    size_t kept = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (r->items[i].amount > 0) {
            r->items[kept++] = r->items[i];
        } else {
            free(r->items[i].devices);
        }
    }
    r->n = kept;
    qsort(r->items, r->n, sizeof(fk_offer), by_name);
    r->slots = slots;
    for (size_t i = 0; i < r->n; i++) {
        fk_offer *o = &r->items[i];
        if (o->devices) {
            o->taken = rcalloc(o->ndevices, 1);
            o->last = rcalloc((size_t)slots, sizeof(int *));
        }
    }
}

void fk_resources_destroy(fk_resources *r) {
    for (size_t i = 0; i < r->n; i++) {
        fk_offer *o = &r->items[i];
        for (size_t d = 0; d < o->ndevices; d++) {
            free(o->devices[d]);
        }
        free(o->devices);
        free(o->taken);
        for (int s = 0; o->last && s < r->slots; s++) {
            free(o->last[s]);
        }
        free(o->last);
    }
    r->n = 0;
}

void fk_resources_attribute(const fk_resources *r, char *out, size_t outlen) {
    size_t at = 0;
    out[0] = 0;
    for (size_t i = 0; i < r->n && at < outlen; i++) {
        int w = snprintf(out + at, outlen - at, "%s%s=%lld", i ? "," : "", r->items[i].name,
                         (long long)r->items[i].amount);
        at += w > 0 ? (size_t)w : 0;
    }
}

int fk_asked_of(const fk_spec *spec, fk_asked *a, char *err, size_t errlen) {
    a->n = 0;
    const fk_ext *x = fk_ext_find(&spec->ext, FK_EXT_NAMED_RESOURCES);
    if (!x) {
        return 0;
    }
    fk_reader rd;
    fk_reader_init(&rd, (const uint8_t *)x->value.s, x->value.len);
    uint16_t n = fk_rd_u16(&rd, "named resources count");
    if (fk_reader_ok(&rd) && (n == 0 || n > FK_RESOURCES_MAX)) {
        snprintf(err, errlen, "named resources: 1..%d names, got %u", FK_RESOURCES_MAX, n);
        return -1;
    }
    for (uint16_t i = 0; i < n && fk_reader_ok(&rd); i++) {
        size_t len;
        char *name = fk_rd_str(&rd, "named resource", &len);
        uint32_t amount = fk_rd_u32(&rd, "named resource amount");
        if (!fk_reader_ok(&rd)) {
            free(name);
            break;
        }
        const char *problem = name_problem(name, len);
        if (!problem && (amount < 1 || amount > FK_RESOURCE_AMOUNT_MAX)) {
            problem = "an amount is 1..1000000";
        }
        if (!problem && i > 0 && strcmp(a->name[i - 1], name) >= 0) {
            problem = "names must be sorted, each once";
        }
        if (problem) {
            snprintf(err, errlen, "named resources: %s", problem);
            free(name);
            return -1;
        }
        memcpy(a->name[i], name, len + 1);
        a->amount[i] = amount;
        a->n = i + 1u;
        free(name);
    }
    fk_rd_end(&rd, "named resources");
    if (!fk_reader_ok(&rd)) {
        snprintf(err, errlen, "named resources: %s", rd.err);
        return -1;
    }
    return 0;
}

static void describe(char *out, size_t outlen, const char *names, size_t stride, const void *amounts, int wide,
                     size_t n) {
    size_t at = 0;
    out[0] = 0;
    for (size_t i = 0; i < n && at < outlen; i++) {
        long long v = wide ? (long long)((const int64_t *)amounts)[i * (stride / sizeof(int64_t))]
                           : (long long)((const uint32_t *)amounts)[i];
        int w = snprintf(out + at, outlen - at, "%s%lld %s", i ? ", " : "", v, names + i * stride);
        at += w > 0 ? (size_t)w : 0;
    }
}

const char *fk_resources_problem(const fk_resources *r, const fk_asked *a, char *why, size_t whylen) {
    int ok = 1;
    for (size_t i = 0; i < a->n && ok; i++) {
        const fk_offer *o = find((fk_resources *)r, a->name[i]);
        ok = o && (int64_t)a->amount[i] <= o->amount;
    }
    if (ok) {
        return NULL;
    }
    char asked[512], offered[512] = "no named resources";
    describe(asked, sizeof asked, a->name[0], sizeof a->name[0], a->amount, 0, a->n);
    if (r->n) {
        describe(offered, sizeof offered, r->items[0].name, sizeof(fk_offer),
                 &r->items[0].amount, 1, r->n);
    }
    snprintf(why, whylen, "needs %s; this executor offers %s", asked, offered);
    return why;
}

int fk_resources_free(const fk_resources *r, const fk_asked *a) {
    for (size_t i = 0; i < a->n; i++) {
        const fk_offer *o = find((fk_resources *)r, a->name[i]);
        if (!o || (int64_t)a->amount[i] > o->amount - o->held) {
            return 0;
        }
    }
    return 1;
}

/* Sets name=value in spec's environment, replacing the task's own. */
static void set_env(fk_spec *spec, const char *name, const char *value) {
    for (size_t i = 0; i < spec->env.n; i++) {
        if (spec->env.items[i].key.len == strlen(name) && !strcmp(spec->env.items[i].key.s, name)) {
            fk_str_free(&spec->env.items[i].value);
            spec->env.items[i].value = fk_str_of(value);
            return;
        }
    }
    fk_kv *items = realloc(spec->env.items, (spec->env.n + 1) * sizeof(fk_kv));
    if (!items) {
        abort();
    }
    spec->env.items = items;
    spec->env.items[spec->env.n].key = fk_str_of(name);
    spec->env.items[spec->env.n].value = fk_str_of(value);
    spec->env.n++;
}

/* CUDA_VISIBLE_DEVICES, or ROCm's two: HIP_VISIBLE_DEVICES counts among the devices ROCR_VISIBLE_DEVICES
 * left visible, so it is 0..n-1, not the indices again. No device: CUDA's empty list, ROCm's -1. */
static void gpu_variables(fk_spec *spec, int amd, const char *list, size_t n) {
    if (!amd) {
        set_env(spec, "CUDA_VISIBLE_DEVICES", list);
        return;
    }
    char rel[FK_DEVICES_MAX * 5 + 8];
    size_t at = 0;
    rel[0] = 0;
    for (size_t i = 0; i < n; i++) {
        at += (size_t)snprintf(rel + at, sizeof rel - at, "%s%zu", i ? "," : "", i);
    }
    set_env(spec, "ROCR_VISIBLE_DEVICES", n ? list : "-1");
    set_env(spec, "HIP_VISIBLE_DEVICES", n ? rel : "-1");
}

void fk_resources_take(fk_resources *r, const fk_asked *a, int slot, fk_spec *spec, fk_grant *g) {
    memset(g, 0, sizeof *g);
    fk_offer *gpus = find(r, "gpus");
    if (gpus && gpus->devices) {
        gpu_variables(spec, gpus->amd, "", 0); /* hidden unless the task asks for some */
    }
    for (size_t i = 0; i < a->n; i++) {
        fk_offer *o = find(r, a->name[i]);
        size_t k = (size_t)(o - r->items);
        uint32_t n = a->amount[i];
        char var[FK_RESOURCE_NAME_MAX + 20];
        snprintf(var, sizeof var, "FALKON_RESOURCE_%s", o->name);
        for (char *c = var + 16; *c; c++) {
            *c = (char)toupper((unsigned char)*c);
        }
        o->held += n;
        if (!o->devices) {
            g->units[k] = n;
            char v[32];
            snprintf(v, sizeof v, "%u", n);
            set_env(spec, var, v);
            continue;
        }
        int *picked = rcalloc(n + 1, sizeof(int));
        size_t got = 0;
        int *last = o->last[slot];
        for (size_t j = 0; last && last[j] >= 0 && got < n; j++) {
            if (!o->taken[last[j]]) {
                o->taken[last[j]] = 1;
                picked[got++] = last[j];
            }
        }
        for (size_t d = 0; d < o->ndevices && got < n; d++) {
            if (!o->taken[d]) {
                o->taken[d] = 1;
                picked[got++] = (int)d;
            }
        }
        picked[got] = -1;
        /* in index order, as the Java executor lists them */
        for (size_t x = 1; x < got; x++) {
            for (size_t y = x; y > 0 && picked[y - 1] > picked[y]; y--) {
                int t = picked[y];
                picked[y] = picked[y - 1];
                picked[y - 1] = t;
            }
        }
        g->devices[k] = picked;
        free(o->last[slot]);
        o->last[slot] = rcalloc(got + 1, sizeof(int));
        memcpy(o->last[slot], picked, (got + 1) * sizeof(int));
        size_t cap = got * 66 + 1, at = 0;
        char *list = rcalloc(cap, 1);
        for (size_t j = 0; j < got; j++) {
            at += (size_t)snprintf(list + at, cap - at, "%s%s", j ? "," : "", o->devices[picked[j]]);
        }
        set_env(spec, var, list);
        if (!strcmp(o->name, "gpus")) {
            gpu_variables(spec, o->amd, list, got);
        }
        free(list);
    }
}

void fk_resources_give(fk_resources *r, fk_grant *g) {
    for (size_t k = 0; k < r->n; k++) {
        fk_offer *o = &r->items[k];
        if (g->devices[k]) {
            for (size_t j = 0; g->devices[k][j] >= 0; j++) {
                o->taken[g->devices[k][j]] = 0;
                o->held--;
            }
            free(g->devices[k]);
            g->devices[k] = NULL;
        }
        o->held -= g->units[k];
        g->units[k] = 0;
    }
}
