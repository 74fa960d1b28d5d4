#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* After the leader exits, output still in flight is read for at most this long: a process that
 * left the group (setsid) and kept the pipe open must not hold the slot. */
#define DRAIN_GRACE_MS 1000

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

void fk_runner_init(fk_runner *r, size_t cap, const char *workdir) {
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->lock, NULL);
    r->cap = cap;
    r->workdir = workdir;
    r->out = malloc(cap ? cap : 1);
    r->err = malloc(cap ? cap : 1);
    if (!r->out || !r->err) {
        abort();
    }
}

void fk_runner_destroy(fk_runner *r) {
    pthread_mutex_destroy(&r->lock);
    free(r->out);
    free(r->err);
}

/* With r->lock held and the leader not reaped (so its group id cannot have been reused). */
static void kill_group(pid_t leader) {
    if (leader > 0 && kill(-leader, SIGKILL) != 0 && errno != ESRCH) {
        fprintf(stderr, "falkon-executor-c: kill(-%d): %s\n", (int)leader, strerror(errno));
    }
}

int fk_runner_cancel(fk_runner *r, uint64_t task_id) {
    pthread_mutex_lock(&r->lock);
    int mine = r->active && r->task == task_id;
    if (mine) {
        r->cancelled = 1;
        kill_group(r->pid);
    }
    pthread_mutex_unlock(&r->lock);
    return mine;
}

void fk_runner_kill(fk_runner *r) {
    pthread_mutex_lock(&r->lock);
    if (r->active) {
        r->cancelled = 1;
        kill_group(r->pid);
    }
    pthread_mutex_unlock(&r->lock);
}

/* The executor's environment with the task's variables (and extra ones) replacing or adding. */
void fk_runner_close(fk_runner *r) {
    pthread_mutex_lock(&r->lock);
    r->closed = 1;
    if (r->active) {
        r->cancelled = 1;
        kill_group(r->pid);
    }
    pthread_mutex_unlock(&r->lock);
}

static char **merged_env(const fk_spec *spec, char *const *extra, char ***owned) {
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

static void free_env(char **env, char **owned) {
    if (env == environ) {
        return;
    }
    for (size_t i = 0; owned && owned[i]; i++) {
        free(owned[i]);
    }
    free(owned);
    free(env);
}

static fk_str str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static fk_str str_printf(const char *fmt, ...) {
    char t[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t, sizeof t, fmt, ap);
    va_end(ap);
    return fk_str_dup(t, n < 0 ? 0 : (size_t)n < sizeof t ? (size_t)n : sizeof t - 1);
}

/* Reads what is available from fd into buf (up to cap, the rest dropped). Returns 0 at EOF. */
static int drain(int fd, uint8_t *buf, size_t cap, size_t *len, int *truncated) {
    char scratch[16384];
    for (;;) {
        ssize_t n;
        if (*len < cap) {
            n = read(fd, buf + *len, cap - *len);
            if (n > 0) {
                *len += (size_t)n;
                continue;
            }
        } else {
            n = read(fd, scratch, sizeof scratch);
            if (n > 0) {
                *truncated = 1;
                continue;
            }
        }
        if (n == 0) {
            return 0;
        }
        if (errno == EINTR) {
            continue;
        }
        return errno == EAGAIN ? 1 : 0;
    }
}

static void fail(fk_exec *out, uint8_t status, int64_t started, fk_str detail) {
    memset(out, 0, sizeof *out);
    out->status = status;
    out->exit_code = -1;
    out->started_us = started;
    out->finished_us = fk_now_micros();
    out->out = fk_str_dup("", 0);
    out->err = fk_str_dup("", 0);
    out->detail = detail;
}

void fk_run(fk_runner *r, uint64_t task_id, const fk_spec *spec, char *const *extra_env, const char *workdir,
            fk_exec *out) {
    int64_t started = fk_now_micros();
    const char *dir = spec->workdir.len ? spec->workdir.s : workdir ? workdir : r->workdir;
    int po[2], pe[2];
    if (pipe2(po, O_CLOEXEC) != 0) {
        fail(out, FK_LAUNCH_FAILED, started, str_printf("cannot create a pipe: %s", strerror(errno)));
        return;
    }
    if (pipe2(pe, O_CLOEXEC) != 0) {
        close(po[0]);
        close(po[1]);
        fail(out, FK_LAUNCH_FAILED, started, str_printf("cannot create a pipe: %s", strerror(errno)));
        return;
    }
    char **argv = calloc(spec->argc + 1, sizeof(char *));
    if (!argv) {
        abort();
    }
    for (size_t i = 0; i < spec->argc; i++) {
        argv[i] = spec->argv[i].s;
    }
    char **owned;
    char **envp = merged_env(spec, extra_env, &owned);

    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, po[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
    posix_spawn_file_actions_addchdir_np(&fa, dir);
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);

    pid_t pid = 0;
    int rc;
    pthread_mutex_lock(&r->lock);
    int closed = r->closed;
    r->task = task_id;
    r->active = !closed;
    r->cancelled = 0;
    r->timed_out = 0;
    rc = closed ? ECANCELED
                : strchr(argv[0], '/') ? posix_spawn(&pid, argv[0], &fa, &attr, argv, envp)
                                       : posix_spawnp(&pid, argv[0], &fa, &attr, argv, envp);
    r->pid = rc == 0 ? pid : 0;
    pthread_mutex_unlock(&r->lock);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    free_env(envp, owned);
    free(argv);
    close(po[1]);
    close(pe[1]);
    if (closed) {
        close(po[0]);
        close(pe[0]);
        fail(out, FK_CANCELLED, started, fk_str_of("the executor is stopping"));
        return;
    }
    if (rc != 0) {
        close(po[0]);
        close(pe[0]);
        pthread_mutex_lock(&r->lock);
        r->active = 0;
        pthread_mutex_unlock(&r->lock);
        struct stat st;
        fk_str why = stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)
                         ? str_printf("working directory %s does not exist: %s", dir, strerror(rc))
                         : str_printf("cannot start %s: %s", spec->argv[0].s, strerror(rc));
        fail(out, FK_LAUNCH_FAILED, started, why);
        return;
    }

    fcntl(po[0], F_SETFL, O_NONBLOCK);
    fcntl(pe[0], F_SETFL, O_NONBLOCK);
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    size_t nout = 0, nerr = 0;
    int tout = 0, terr = 0;
    int fo = po[0], fe = pe[0];
    int exited = 0;
    int64_t deadline = spec->wall_ms ? fk_mono_millis() + spec->wall_ms : -1;
    int64_t grace_end = -1;
    while (fo >= 0 || fe >= 0 || !exited) {
        struct pollfd p[3];
        int n = 0, io = -1, ie = -1, ip = -1;
        if (fo >= 0) {
            io = n;
            p[n++] = (struct pollfd){.fd = fo, .events = POLLIN};
        }
        if (fe >= 0) {
            ie = n;
            p[n++] = (struct pollfd){.fd = fe, .events = POLLIN};
        }
        if (!exited && pidfd >= 0) {
            ip = n;
            p[n++] = (struct pollfd){.fd = pidfd, .events = POLLIN};
        }
        int64_t now = fk_mono_millis();
        int64_t until = exited ? grace_end : deadline;
        int timeout = until < 0 ? -1 : until > now ? (int)(until - now) : 0;
        if (!exited && pidfd < 0 && (timeout < 0 || timeout > 10)) {
            timeout = 10; /* no pidfd (old kernel): look for the exit every 10 ms */
        }
        int k = poll(p, (nfds_t)n, timeout);
        if (k < 0 && errno != EINTR) {
            break;
        }
        if (io >= 0 && (p[io].revents & (POLLIN | POLLHUP | POLLERR)) && !drain(fo, r->out, r->cap, &nout, &tout)) {
            close(fo);
            fo = -1;
        }
        if (ie >= 0 && (p[ie].revents & (POLLIN | POLLHUP | POLLERR)) && !drain(fe, r->err, r->cap, &nerr, &terr)) {
            close(fe);
            fe = -1;
        }
        if (!exited) {
            siginfo_t si;
            memset(&si, 0, sizeof si);
            int gone = ip >= 0 ? (p[ip].revents & POLLIN) != 0
                               : pidfd < 0 && waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
                                     si.si_pid == pid;
            if (gone) {
                exited = 1;
                grace_end = fk_mono_millis() + DRAIN_GRACE_MS;
                /* the leader is a zombie, so its group id is still ours: take down what it left */
                pthread_mutex_lock(&r->lock);
                kill_group(pid);
                r->pid = 0;
                pthread_mutex_unlock(&r->lock);
            } else if (deadline >= 0 && fk_mono_millis() >= deadline) {
                pthread_mutex_lock(&r->lock);
                if (!r->timed_out) {
                    r->timed_out = 1;
                    kill_group(pid);
                }
                pthread_mutex_unlock(&r->lock);
                deadline = -1;
            }
        } else if (grace_end >= 0 && fk_mono_millis() >= grace_end) {
            break;
        }
    }
    if (fo >= 0) {
        close(fo);
    }
    if (fe >= 0) {
        close(fe);
    }
    if (pidfd >= 0) {
        close(pidfd);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    pthread_mutex_lock(&r->lock);
    int cancelled = r->cancelled, timed_out = r->timed_out;
    r->pid = 0;
    r->active = 0;
    pthread_mutex_unlock(&r->lock);

    memset(out, 0, sizeof *out);
    out->started_us = started;
    out->finished_us = fk_now_micros();
    out->exit_code = -1;
    if (timed_out) {
        out->status = FK_TIMEOUT;
        out->detail = str_printf("wall time %u ms exceeded; process tree killed", spec->wall_ms);
    } else if (cancelled) {
        out->status = FK_CANCELLED;
        out->detail = fk_str_of("cancelled");
    } else {
        out->status = FK_EXITED;
        if (WIFSIGNALED(status)) {
            out->exit_code = 128 + WTERMSIG(status);
            out->detail = str_printf("killed by signal %d", WTERMSIG(status));
        } else {
            out->exit_code = WEXITSTATUS(status);
            out->detail = fk_str_dup("", 0);
        }
    }
    out->flags = (uint8_t)((tout ? FK_FLAG_STDOUT_TRUNCATED : 0) | (terr ? FK_FLAG_STDERR_TRUNCATED : 0));
    out->out = fk_str_dup((const char *)r->out, nout);
    out->err = fk_str_dup((const char *)r->err, nerr);
}
