#include "runner.h"

#include "affinity.h"
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
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
/* While a task's output is open, how often its leader's exit is checked. */
#define EXIT_CHECK_MS 100

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
    free(r->last_name);
    free(r->last_path);
}

int fk_runner_cancel(fk_runner *r, uint64_t task_id) {
    pthread_mutex_lock(&r->lock);
    int mine = r->active && r->task == task_id;
    if (mine) {
        r->cancelled = 1;
        fk_kill_group(r->pid);
    }
    pthread_mutex_unlock(&r->lock);
    return mine;
}

void fk_runner_kill(fk_runner *r) {
    pthread_mutex_lock(&r->lock);
    if (r->active) {
        r->cancelled = 1;
        fk_kill_group(r->pid);
    }
    pthread_mutex_unlock(&r->lock);
}

void fk_runner_close(fk_runner *r) {
    pthread_mutex_lock(&r->lock);
    r->closed = 1;
    if (r->active) {
        r->cancelled = 1;
        fk_kill_group(r->pid);
    }
    pthread_mutex_unlock(&r->lock);
}


/* One read from a pipe poll found ready (so it cannot block): into buf up to cap, beyond that
 * into a scratch buffer and dropped. Returns 0 at end of file. */
static int read_once(int fd, uint8_t *buf, size_t cap, size_t *len, int *truncated) {
    char scratch[16384];
    for (;;) {
        ssize_t n = *len < cap ? read(fd, buf + *len, cap - *len) : read(fd, scratch, sizeof scratch);
        if (n > 0) {
            if (*len < cap) {
                *len += (size_t)n;
            } else {
                *truncated = 1;
            }
            return 1;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        return 0;
    }
}

/* Signals that have a handler in this process when the first task starts: the child resets them
 * before exec so no handler can run in it (exec resets them too, but a vfork child shares our
 * memory until then). Ignored signals are reset as well: a task starts with default
 * dispositions, as under the Java executor. */
static int reset_signals[64];
static int nreset;
static pthread_once_t reset_once = PTHREAD_ONCE_INIT;

static void find_reset_signals(void) {
    for (int sig = 1; sig < 64 && sig < SIGRTMIN; sig++) {
        struct sigaction sa;
        if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &sa) != 0) {
            continue;
        }
        if (sa.sa_handler != SIG_DFL) {
            reset_signals[nreset++] = sig;
        }
    }
}

/* Where the program is: argv0 itself if it has a slash, else the first executable match on the
 * executor's PATH (as posix_spawnp and execvp do). The last lookup is remembered per slot. */
static const char *resolve(fk_runner *r, const char *argv0, int *err) {
    if (strchr(argv0, '/')) {
        return argv0;
    }
    if (r->last_name && strcmp(r->last_name, argv0) == 0 && access(r->last_path, X_OK) == 0) {
        return r->last_path;
    }
    const char *path = getenv("PATH");
    if (!path || !*path) {
        path = "/bin:/usr/bin";
    }
    *err = ENOENT;
    size_t nl = strlen(argv0);
    for (const char *p = path; *p;) {
        const char *colon = strchr(p, ':');
        size_t dl = colon ? (size_t)(colon - p) : strlen(p);
        char cand[PATH_MAX];
        if (dl + nl + 2 <= sizeof cand) {
            memcpy(cand, dl ? p : ".", dl ? dl : 1);
            size_t k = dl ? dl : 1;
            cand[k++] = '/';
            memcpy(cand + k, argv0, nl + 1);
            struct stat st;
            if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
                if (access(cand, X_OK) == 0) {
                    free(r->last_name);
                    free(r->last_path);
                    r->last_name = strdup(argv0);
                    r->last_path = strdup(cand);
                    if (!r->last_name || !r->last_path) {
                        abort();
                    }
                    return r->last_path;
                }
                *err = EACCES;
            }
        }
        if (!colon) {
            break;
        }
        p = colon + 1;
    }
    return NULL;
}

enum { STAGE_NONE = 0, STAGE_CHDIR = 1, STAGE_EXEC = 2, STAGE_BIND = 3 };

/* vfork + exec: the child shares our memory and this thread's stack until it execs, so it only
 * makes async-signal-safe calls and reports a failure through *child_errno and *stage. Cheaper
 * than posix_spawn here (no child stack to map and unmap, a few signal resets instead of one
 * sigaction per signal). All signals are blocked around it so no handler runs in the child. */
static __attribute__((noinline)) pid_t spawn(const char *path, char *const *argv, char *const *envp, int out_w,
                                             int err_w, const char *dir, const cpu_set_t *cpus,
                                             const fk_bind *binds, const int *trees, size_t nbinds,
                                             volatile int *child_errno, volatile int *stage,
                                             volatile size_t *bind_failed) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t pid = vfork();
    if (pid == 0) {
        setpgid(0, 0);
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        for (int i = 0; i < nreset; i++) {
            sigaction(reset_signals[i], &dfl, NULL);
        }
        int null = open("/dev/null", O_RDONLY);
        if (null > 0) {
            dup2(null, 0);
        }
        dup2(out_w, 1);
        dup2(err_w, 2);
        size_t at = 0;
        int e = nbinds ? fk_binds_enter(binds, trees, nbinds, &at) : 0;
        if (e != 0) {
            *child_errno = e;
            *bind_failed = at;
            *stage = STAGE_BIND;
            _exit(127);
        }
        if (chdir(dir) != 0) {
            *child_errno = errno;
            *stage = STAGE_CHDIR;
            _exit(127);
        }
        close_range(3, ~0U, 0);
        if (cpus) {
            sched_setaffinity(0, sizeof *cpus, cpus); /* on failure it keeps the slot's CPU */
        } else {
            fk_affinity_release_child();
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execve(path, argv, envp);
        *child_errno = errno;
        *stage = STAGE_EXEC;
        _exit(127);
    }
    int e = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return pid;
}

/* The leader has exited but is not reaped, so its group id is still ours: take down what it
 * left running, and stop cancels from targeting it. */
static void leader_exited(fk_runner *r, pid_t pid) {
    pthread_mutex_lock(&r->lock);
    fk_kill_group(pid);
    r->pid = 0;
    pthread_mutex_unlock(&r->lock);
}

static void expire(fk_runner *r, pid_t pid) {
    pthread_mutex_lock(&r->lock);
    if (!r->timed_out && r->pid == pid) {
        r->timed_out = 1;
        fk_kill_group(pid);
    }
    pthread_mutex_unlock(&r->lock);
}

/* The task closed its output but runs on: wait for its exit (unreaped), up to the deadline. */
static void await_exit(fk_runner *r, pid_t pid, int64_t deadline) {
    siginfo_t si;
    if (deadline < 0) {
        while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
        }
        return;
    }
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    for (;;) {
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid) {
            break;
        }
        int64_t now = fk_mono_millis();
        if (deadline >= 0 && now >= deadline) {
            expire(r, pid);
            deadline = -1;
            continue;
        }
        int timeout = deadline < 0 ? -1 : (int)(deadline - now);
        if (pidfd >= 0) {
            struct pollfd p = {.fd = pidfd, .events = POLLIN};
            poll(&p, 1, timeout);
        } else {
            poll(NULL, 0, timeout < 0 || timeout > 10 ? 10 : timeout); /* no pidfd: old kernel */
        }
    }
    if (pidfd >= 0) {
        close(pidfd);
    }
}

/* Runs spec once; returns the stage at which its start failed (STAGE_NONE when it started). */
static int run_once(fk_runner *r, uint64_t task_id, const fk_spec *spec, char *const *extra_env,
                    const char *workdir, fk_exec *out) {
    int64_t started = fk_now_micros();
    const char *dir = spec->workdir.len ? spec->workdir.s : workdir ? workdir : r->workdir;
    /* each start gets clones of its own: a clone attached in one child's namespace cannot be
     * attached again (a shell line's second start) */
    size_t nbinds = r->nbinds;
    int *trees = nbinds ? malloc(nbinds * sizeof *trees) : NULL;
    volatile size_t bind_failed = 0;
    if (nbinds) {
        size_t bad = 0;
        if (!trees) {
            abort();
        }
        if (fk_binds_clone(r->binds, nbinds, trees, &bad) != 0) {
            fk_exec_fail(out, FK_LAUNCH_FAILED, started, fk_str_printf("cannot give read-only input %s in place: %s",
                                                                       r->binds[bad].target, strerror(errno)));
            free(trees);
            return STAGE_BIND;
        }
    }
    int po[2], pe[2];
    if (pipe2(po, O_CLOEXEC) != 0) {
        fk_exec_fail(out, FK_LAUNCH_FAILED, started, fk_str_printf("cannot create a pipe: %s", strerror(errno)));
        fk_binds_close(trees, nbinds);
        free(trees);
        return STAGE_NONE;
    }
    if (pipe2(pe, O_CLOEXEC) != 0) {
        close(po[0]);
        close(po[1]);
        fk_exec_fail(out, FK_LAUNCH_FAILED, started, fk_str_printf("cannot create a pipe: %s", strerror(errno)));
        fk_binds_close(trees, nbinds);
        free(trees);
        return STAGE_NONE;
    }
    char **argv = calloc(spec->argc + 1, sizeof(char *));
    if (!argv) {
        abort();
    }
    for (size_t i = 0; i < spec->argc; i++) {
        argv[i] = spec->argv[i].s;
    }
    char **owned;
    char **envp = fk_merged_env(spec, extra_env, &owned);

    pthread_once(&reset_once, find_reset_signals);
    int lookup_err = 0;
    const char *path = resolve(r, argv[0], &lookup_err);
    volatile int child_errno = 0, stage = STAGE_NONE;
    pid_t pid = 0;
    pthread_mutex_lock(&r->lock);
    int closed = r->closed;
    r->task = task_id;
    r->active = !closed && path;
    r->cancelled = 0;
    r->timed_out = 0;
    int rc = closed ? ECANCELED : !path ? lookup_err : 0;
    if (rc == 0) {
        pid = spawn(path, argv, envp, po[1], pe[1], dir, r->confine ? &r->cpus : NULL, r->binds, trees, nbinds,
                    &child_errno, &stage, &bind_failed);
        if (pid < 0) {
            rc = errno;
        } else if (stage != STAGE_NONE) {
            rc = child_errno; /* the child could not start the program; reaped below */
        }
    }
    r->pid = rc == 0 ? pid : 0;
    r->active = rc == 0;
    pthread_mutex_unlock(&r->lock);
    fk_binds_close(trees, nbinds); /* attached in the child's namespace, or never */
    free(trees);
    fk_free_env(envp, owned);
    free(argv);
    close(po[1]);
    close(pe[1]);
    if (closed) {
        close(po[0]);
        close(pe[0]);
        fk_exec_fail(out, FK_CANCELLED, started, fk_str_of("the executor is stopping"));
        return STAGE_NONE;
    }
    if (rc != 0) {
        close(po[0]);
        close(pe[0]);
        if (pid > 0) {
            while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
            }
        }
        fk_str why = stage == STAGE_CHDIR
                         ? fk_str_printf("working directory %s does not exist: %s", dir, strerror(rc))
                     : stage == STAGE_BIND
                         ? fk_str_printf("cannot give read-only input %s in place: %s", r->binds[bind_failed].target,
                                         strerror(rc))
                         : fk_str_printf("cannot start %s: %s", spec->argv[0].s, strerror(rc));
        fk_exec_fail(out, FK_LAUNCH_FAILED, started, why);
        /* no retry could start it: not retried (docs/protocol.md); but the executor's own working
         * directory missing (a task that set none) is the node's fault: another executor may run it */
        bool own_dir_missing = stage == STAGE_CHDIR && spec->workdir.len == 0;
        if ((rc == ENOENT || rc == EACCES || rc == ENOTDIR || rc == ENOEXEC) && !own_dir_missing && stage != STAGE_BIND) {
            out->flags |= FK_FLAG_PERMANENT;
        }
        return stage;
    }

    /* Output first: for most tasks both pipes reach end of file when the task exits. While they
     * are open, the leader's exit is checked every EXIT_CHECK_MS (a background process may hold
     * them), and the wall-time deadline bounds every wait. */
    size_t nout = 0, nerr = 0;
    int tout = 0, terr = 0;
    int fo = po[0], fe = pe[0];
    int exited = 0;
    int64_t deadline = spec->wall_ms ? fk_mono_millis() + spec->wall_ms : -1;
    int64_t grace_end = -1;
    while (fo >= 0 || fe >= 0) {
        struct pollfd p[2];
        int n = 0, io = -1, ie = -1;
        if (fo >= 0) {
            io = n;
            p[n++] = (struct pollfd){.fd = fo, .events = POLLIN};
        }
        if (fe >= 0) {
            ie = n;
            p[n++] = (struct pollfd){.fd = fe, .events = POLLIN};
        }
        int64_t now = fk_mono_millis();
        int64_t until = exited ? grace_end : now + EXIT_CHECK_MS;
        if (!exited && deadline >= 0 && deadline < until) {
            until = deadline;
        }
        int k = poll(p, (nfds_t)n, until > now ? (int)(until - now) : 0);
        if (k < 0 && errno != EINTR) {
            break;
        }
        if (io >= 0 && (p[io].revents & (POLLIN | POLLHUP | POLLERR)) && !read_once(fo, r->out, r->cap, &nout, &tout)) {
            close(fo);
            fo = -1;
        }
        if (ie >= 0 && (p[ie].revents & (POLLIN | POLLHUP | POLLERR)) && !read_once(fe, r->err, r->cap, &nerr, &terr)) {
            close(fe);
            fe = -1;
        }
        if (k == 0 && !exited) {
            siginfo_t si;
            memset(&si, 0, sizeof si);
            if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid) {
                exited = 1;
                grace_end = fk_mono_millis() + DRAIN_GRACE_MS;
                leader_exited(r, pid);
            } else if (deadline >= 0 && fk_mono_millis() >= deadline) {
                expire(r, pid);
                deadline = -1;
            }
        } else if (exited && fk_mono_millis() >= grace_end) {
            break;
        }
    }
    if (fo >= 0) {
        close(fo);
    }
    if (fe >= 0) {
        close(fe);
    }
    if (!exited) {
        await_exit(r, pid, deadline);
        leader_exited(r, pid);
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
        out->detail = fk_str_printf("wall time %u ms exceeded; process tree killed", spec->wall_ms);
    } else if (cancelled) {
        out->status = FK_CANCELLED;
        out->detail = fk_str_of("cancelled");
    } else {
        out->status = FK_EXITED;
        if (WIFSIGNALED(status)) {
            out->exit_code = 128 + WTERMSIG(status);
            out->detail = fk_str_printf("killed by signal %d", WTERMSIG(status));
        } else {
            out->exit_code = WEXITSTATUS(status);
            out->detail = fk_str_dup("", 0);
        }
    }
    out->flags = (uint8_t)((tout ? FK_FLAG_STDOUT_TRUNCATED : 0) | (terr ? FK_FLAG_STDERR_TRUNCATED : 0));
    out->out = fk_str_dup((const char *)r->out, nout);
    out->err = fk_str_dup((const char *)r->err, nerr);
    return STAGE_NONE;
}

void fk_run_process(fk_runner *r, uint64_t task_id, const fk_spec *spec, char *const *extra_env, const char *workdir,
                    fk_exec *out) {
    int failed_at = run_once(r, task_id, spec, extra_env, workdir, out);
    const fk_ext *line = fk_ext_find(&spec->ext, FK_EXT_SHELL_LINE);
    if (out->status != FK_LAUNCH_FAILED || !line || failed_at == STAGE_BIND) {
        return;
    }
    /* a shell line run without the shell whose program cannot start: run the line through the
     * shell, so that the result is the shell's own (127 "not found", 126, a script without #!) */
    fk_spec sh = *spec;
    fk_str argv[3] = {fk_str_of("/bin/sh"), fk_str_of("-c"), fk_str_dup(line->value.s, line->value.len)};
    sh.argc = 3;
    sh.argv = argv;
    fk_exec_free(out);
    run_once(r, task_id, &sh, extra_env, workdir, out);
    for (int i = 0; i < 3; i++) {
        fk_str_free(&argv[i]);
    }
}
