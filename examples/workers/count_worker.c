/*
 * count_worker: a persistent worker (docs/protocol.md section 9) written without any Falkon
 * library: it reads requests on standard input and answers on standard output, so that counting
 * the lines, words and bytes of many small files costs no process per file.
 *
 *   {"args": ["count", "a.txt", "b.txt"], "worker": ["falkon-count-worker"]}   like wc a.txt b.txt
 *   {"args": ["true"], "worker": ["falkon-count-worker"]}                      a no-op
 *
 * Relative paths are taken from the task's working directory (the request's workDir). It leaves
 * when its input ends.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_REQUEST (16u * 1024 * 1024)

static int read_all(int fd, void *p, size_t n) {
    for (size_t got = 0; got < n;) {
        ssize_t r = read(fd, (char *)p + got, n - got);
        if (r <= 0) {
            return -1;
        }
        got += (size_t)r;
    }
    return 0;
}

static int write_all(int fd, const void *p, size_t n) {
    for (size_t put = 0; put < n;) {
        ssize_t w = write(fd, (const char *)p + put, n - put);
        if (w <= 0) {
            return -1;
        }
        put += (size_t)w;
    }
    return 0;
}

static uint32_t u32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

/* A reader over the request body: each field checked against what is left. */
typedef struct {
    const uint8_t *p;
    size_t left;
    int bad;
} reader;

static const uint8_t *take(reader *r, size_t n) {
    if (r->bad || n > r->left) {
        r->bad = 1;
        return NULL;
    }
    const uint8_t *p = r->p;
    r->p += n;
    r->left -= n;
    return p;
}

static uint32_t take32(reader *r) {
    const uint8_t *p = take(r, 4);
    return p ? u32(p) : 0;
}

/* A str as a new NUL-terminated string (NULL when the body is malformed). */
static char *take_str(reader *r) {
    uint32_t n = take32(r);
    const uint8_t *p = take(r, n);
    char *s = p ? malloc((size_t)n + 1) : NULL;
    if (s) {
        memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

/* Appends to a growing output buffer. */
typedef struct {
    char *data;
    size_t len, cap;
} out;

static void emit(out *o, const char *s) {
    size_t n = strlen(s);
    if (o->len + n > o->cap) {
        o->cap = (o->len + n) * 2 + 256;
        o->data = realloc(o->data, o->cap);
        if (!o->data) {
            abort();
        }
    }
    memcpy(o->data + o->len, s, n);
    o->len += n;
}

static int count(const char *dir, const char *path, out *o, out *e) {
    char full[8192];
    snprintf(full, sizeof full, "%s%s%s", path[0] == '/' ? "" : dir, path[0] == '/' ? "" : "/", path);
    FILE *f = fopen(full, "rb");
    char line[8400];
    if (!f) {
        snprintf(line, sizeof line, "count: %s: cannot open\n", path);
        emit(e, line);
        return 1;
    }
    long lines = 0, words = 0, bytes = 0;
    int c, in_word = 0;
    while ((c = getc(f)) != EOF) {
        bytes++;
        lines += c == '\n';
        if (isspace(c)) {
            in_word = 0;
        } else if (!in_word) {
            in_word = 1;
            words++;
        }
    }
    fclose(f);
    snprintf(line, sizeof line, "%ld %ld %ld %s\n", lines, words, bytes, path);
    emit(o, line);
    return 0;
}

int main(void) {
    uint8_t head[4];
    while (read_all(0, head, 4) == 0) {
        uint32_t n = u32(head);
        if (n > MAX_REQUEST) {
            fprintf(stderr, "count_worker: a request of %u bytes\n", n);
            return 2;
        }
        uint8_t *body = malloc(n ? n : 1);
        if (!body || read_all(0, body, n) != 0) {
            return 2;
        }
        reader r = {body, n, 0};
        const uint8_t *task = take(&r, 8); /* taskId */
        take32(&r);                        /* maxOutput: what this worker writes is small */
        uint32_t argc = take32(&r);
        char **argv = calloc((size_t)argc + 1, sizeof(char *));
        for (uint32_t i = 0; argv && i < argc && !r.bad; i++) {
            argv[i] = take_str(&r);
        }
        uint32_t nenv = take32(&r);
        for (uint32_t i = 0; i < nenv && !r.bad; i++) {
            free(take_str(&r));
            free(take_str(&r));
        }
        char *dir = take_str(&r);
        if (r.bad || !argv || argc == 0 || !dir) {
            fprintf(stderr, "count_worker: a malformed request\n");
            return 2;
        }
        out o = {0}, e = {0};
        int32_t code = 0;
        if (strcmp(argv[0], "count") == 0) {
            for (uint32_t i = 1; i < argc; i++) {
                code |= count(dir, argv[i], &o, &e);
            }
        } else if (strcmp(argv[0], "true") != 0) {
            emit(&e, "count_worker: the verbs are count FILE... and true\n");
            code = 2;
        }
        uint8_t reply[20];
        put32(reply, (uint32_t)(8 + 4 + 4 + o.len + 4 + e.len));
        memcpy(reply + 4, task, 8);
        put32(reply + 12, (uint32_t)code);
        put32(reply + 16, (uint32_t)o.len);
        uint8_t elen[4];
        put32(elen, (uint32_t)e.len);
        if (write_all(1, reply, 20) || write_all(1, o.data ? o.data : "", o.len) || write_all(1, elen, 4)
            || write_all(1, e.data ? e.data : "", e.len)) {
            return 1;
        }
        for (uint32_t i = 0; i < argc; i++) {
            free(argv[i]);
        }
        free(argv);
        free(dir);
        free(o.data);
        free(e.data);
        free(body);
    }
    return 0;
}
