#include "proc.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern char **environ;

int64_t fk_now_micros(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t fk_mono_millis(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* With r->lock held and the leader not reaped (so its group id cannot have been reused). */
void fk_kill_group(pid_t leader) {
    if (leader > 0 && kill(-leader, SIGKILL) != 0 && errno != ESRCH) {
        fprintf(stderr, "falkon-executor-c: kill(-%d): %s\n", (int)leader, strerror(errno));
    }
}

/* The executor's environment with the task's variables (and extra ones) replacing or adding. */
char **fk_merged_env(const fk_spec *spec, char *const *extra, char ***owned) {
    size_t nextra = 0;
    while (extra && extra[nextra]) {
        nextra++;
    }
    *owned = NULL;
    if (spec->env.n == 0 && nextra == 0) {
        return environ;
    }
    size_t nbase = 0;
    while (environ[nbase]) {
        nbase++;
    }
    char **env = calloc(nbase + spec->env.n + nextra + 1, sizeof(char *));
    char **mine = calloc(spec->env.n + 1, sizeof(char *));
    if (!env || !mine) {
        abort();
    }
    size_t k = 0;
    for (size_t i = 0; i < nbase; i++) {
        const char *eq = strchr(environ[i], '=');
        size_t nl = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
        int replaced = 0;
        for (size_t j = 0; j < spec->env.n && !replaced; j++) {
            replaced = spec->env.items[j].key.len == nl && memcmp(spec->env.items[j].key.s, environ[i], nl) == 0;
        }
        for (size_t j = 0; j < nextra && !replaced; j++) {
            replaced = strncmp(extra[j], environ[i], nl) == 0 && extra[j][nl] == '=';
        }
        if (!replaced) {
            env[k++] = environ[i];
        }
    }
    for (size_t j = 0; j < spec->env.n; j++) {
        const fk_kv *kv = &spec->env.items[j];
        char *s = malloc(kv->key.len + kv->value.len + 2);
        if (!s) {
            abort();
        }
        memcpy(s, kv->key.s, kv->key.len);
        s[kv->key.len] = '=';
        memcpy(s + kv->key.len + 1, kv->value.s, kv->value.len + 1);
        mine[j] = s;
        env[k++] = s;
    }
    for (size_t j = 0; j < nextra; j++) {
        env[k++] = extra[j];
    }
    env[k] = NULL;
    *owned = mine;
    return env;
}

void fk_free_env(char **env, char **owned) {
    if (env == environ) {
        return;
    }
    for (size_t i = 0; owned && owned[i]; i++) {
        free(owned[i]);
    }
    free(owned);
    free(env);
}

fk_str fk_str_printf(const char *fmt, ...) {
    char t[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t, sizeof t, fmt, ap);
    va_end(ap);
    return fk_str_dup(t, n < 0 ? 0 : (size_t)n < sizeof t ? (size_t)n : sizeof t - 1);
}

void fk_exec_fail(fk_exec *out, uint8_t status, int64_t started, fk_str detail) {
    memset(out, 0, sizeof *out);
    out->status = status;
    out->exit_code = -1;
    out->started_us = started;
    out->finished_us = fk_now_micros();
    out->out = fk_str_dup("", 0);
    out->err = fk_str_dup("", 0);
    out->detail = detail;
}
