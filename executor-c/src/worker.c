#include "worker.h"

#include "proc.h"

#include "affinity.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_RESPONSE (16u * 1024 * 1024) /* the protocol's frame limit */

struct fk_worker {
    pid_t pid;    /* leader of its own process group; reaped only here */
    int to, from; /* its standard input (ours to write), its standard output */
    fk_buf key;   /* command and environment it was started with */
    int served;
};

/* --- framing --- */

static int extra_overrides(char *const *extra, const fk_str *key) {
    for (size_t i = 0; extra && extra[i]; i++) {
        if (strncmp(extra[i], key->s, key->len) == 0 && extra[i][key->len] == '=') {
            return 1;
        }
    }
    return 0;
}

void fk_worker_request(fk_buf *b, uint64_t task_id, uint32_t max_output, const fk_spec *spec, char *const *extra_env,
                       const char *dir, const uint8_t *payload, size_t npayload) {
    size_t at = b->len;
    fk_buf_u32(b, 0);
    fk_buf_u64(b, task_id);
    fk_buf_u32(b, max_output);
    fk_buf_u32(b, (uint32_t)spec->argc);
    for (size_t i = 0; i < spec->argc; i++) {
        fk_buf_blob(b, spec->argv[i].s, spec->argv[i].len);
    }
    size_t count_at = b->len;
    uint32_t n = 0;
    fk_buf_u32(b, 0);
    for (size_t i = 0; i < spec->env.n; i++) {
        if (!extra_overrides(extra_env, &spec->env.items[i].key)) {
            fk_buf_blob(b, spec->env.items[i].key.s, spec->env.items[i].key.len);
            fk_buf_blob(b, spec->env.items[i].value.s, spec->env.items[i].value.len);
            n++;
        }
    }
    for (size_t i = 0; extra_env && extra_env[i]; i++) {
        const char *eq = strchr(extra_env[i], '=');
        if (eq) {
            fk_buf_blob(b, extra_env[i], (size_t)(eq - extra_env[i]));
            fk_buf_blob(b, eq + 1, strlen(eq + 1));
            n++;
        }
    }
    fk_buf_set_u32(b, count_at, n);
    fk_buf_blob(b, dir, strlen(dir));
    fk_buf_blob(b, payload, npayload);
    fk_buf_set_u32(b, at, (uint32_t)(b->len - at - 4));
}

int fk_worker_response_decode(const uint8_t *body, size_t len, fk_worker_response *r, char *err, size_t errlen) {
    fk_reader rd;
    fk_reader_init(&rd, body, len);
    r->task_id = fk_rd_u64(&rd, "taskId");
    r->exit_code = (int32_t)fk_rd_u32(&rd, "exitCode");
    r->out = fk_rd_blob(&rd, "stdout", &r->nout);
    r->err = fk_rd_blob(&rd, "stderr", &r->nerr);
    fk_rd_end(&rd, "worker response");
    if (!fk_reader_ok(&rd)) {
        snprintf(err, errlen, "%s", rd.err);
        return -1;
    }
    return 0;
}

/* --- the worker's life --- */

/* A worker serves tasks of one command and one environment: it was started with them. */
static void key_of(const fk_str *command, size_t n, const fk_spec *spec, fk_buf *key) {
    fk_buf_init(key);
    for (size_t i = 0; i < n; i++) {
        fk_buf_blob(key, command[i].s, command[i].len);
    }
    fk_buf_u32(key, (uint32_t)spec->env.n);
    for (size_t i = 0; i < spec->env.n; i++) {
        fk_buf_blob(key, spec->env.items[i].key.s, spec->env.items[i].key.len);
        fk_buf_blob(key, spec->env.items[i].value.s, spec->env.items[i].value.len);
    }
}

/* Kills and reaps r's worker; its wait status. */
static int end_worker(fk_runner *r) {
    struct fk_worker *w = r->worker;
    pthread_mutex_lock(&r->lock);
    r->worker = NULL;
    fk_kill_group(w->pid);
    pthread_mutex_unlock(&r->lock);
    close(w->to);
    close(w->from);
    int status = 0;
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR) {
    }
    fk_buf_free(&w->key);
    free(w);
    return status;
}

void fk_run(fk_runner *r, uint64_t task_id, const fk_spec *spec, char *const *extra_env, const char *workdir,
            fk_exec *out) {
    const fk_ext *worker = fk_ext_find(&spec->ext, FK_EXT_WORKER);
    if (worker) {
        fk_worker_run(r, task_id, spec, worker, extra_env, workdir, out);
    } else {
        fk_run_process(r, task_id, spec, extra_env, workdir, out);
    }
}

void fk_worker_stop(fk_runner *r) {
    if (r->worker) {
        end_worker(r);
    }
}

/* Starts the worker in the executor's directory with the task's variables; 0 or an errno. */
static int start_worker(fk_runner *r, const fk_str *command, size_t n, const fk_spec *spec, fk_buf *key) {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0) {
        return errno;
    }
    if (pipe2(out, O_CLOEXEC) != 0) {
        int e = errno;
        close(in[0]);
        close(in[1]);
        return e;
    }
    char **argv = calloc(n + 1, sizeof(char *));
    if (!argv) {
        abort();
    }
    for (size_t i = 0; i < n; i++) {
        argv[i] = command[i].s;
    }
    static char marker[] = "FALKON_WORKER=1";
    char *extra[] = {marker, NULL};
    char **owned;
    char **envp = fk_merged_env(spec, extra, &owned);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addchdir_np(&fa, r->workdir);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, &at, argv, envp);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    fk_free_env(envp, owned);
    free(argv);
    close(in[0]);
    close(out[1]);
    if (rc != 0) {
        close(in[1]);
        close(out[0]);
        return rc;
    }
    fcntl(in[1], F_SETFL, O_NONBLOCK);
    struct fk_worker *w = calloc(1, sizeof *w);
    if (!w) {
        abort();
    }
    w->pid = pid;
    w->to = in[1];
    w->from = out[0];
    w->key = *key;
    fk_buf_init(key);
    pthread_mutex_lock(&r->lock);
    r->worker = w;
    pthread_mutex_unlock(&r->lock);
    fk_info("started worker %s (pid %d)", command[0].s, (int)pid);
    return 0;
}

/* Resident memory of pid in MiB (from /proc; 0 when it cannot be read). */
static int64_t resident_mib(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
    FILE *f = fopen(path, "r");
    long long size = 0, rss = 0;
    if (!f) {
        return 0;
    }
    int ok = fscanf(f, "%lld %lld", &size, &rss) == 2;
    fclose(f);
    return ok ? rss * sysconf(_SC_PAGESIZE) / (1024 * 1024) : 0;
}

/* IO_EOF: the worker's standard output ended; IO_DIED: its standard input was closed (or the pipes failed). */
enum { IO_DONE = 0, IO_DIED = 1, IO_TIMEOUT = 2, IO_TOO_LARGE = 3, IO_EOF = 4 };

/* Whether pid has exited within ms milliseconds (it is not reaped: end_worker does that). A worker that ends
 * closes its output as it exits: the grace tells that from one that closed its output and lives on. */
static int exited_within(pid_t pid, int ms) {
    for (int waited = 0;; waited += 5) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid != 0) {
            return 1;
        }
        if (waited >= ms) {
            return 0;
        }
        struct timespec five = {0, 5 * 1000 * 1000};
        nanosleep(&five, NULL);
    }
}

/* Writes the request and reads one response frame into *resp, within the deadline (-1: none). */
static int exchange(fk_runner *r, struct fk_worker *w, const fk_buf *req, fk_buf *resp, int64_t deadline) {
    size_t sent = 0, need = 4;
    while (resp->len < need) {
        struct pollfd p[2] = {{.fd = w->from, .events = POLLIN}, {.fd = sent < req->len ? w->to : -1, .events = POLLOUT}};
        int64_t now = fk_mono_millis();
        if (deadline >= 0 && now >= deadline) {
            return IO_TIMEOUT;
        }
        int k = poll(p, 2, deadline < 0 ? -1 : (int)(deadline - now));
        if (k < 0 && errno != EINTR) {
            return IO_DIED;
        }
        if (p[1].revents & (POLLOUT | POLLERR | POLLHUP)) {
            ssize_t n = write(w->to, req->data + sent, req->len - sent);
            if (n < 0 && errno != EAGAIN && errno != EINTR) {
                return IO_DIED; /* it closed its input: its exit says why */
            }
            sent += n > 0 ? (size_t)n : 0;
        }
        if (p[0].revents & (POLLIN | POLLERR | POLLHUP)) {
            fk_buf_reserve(resp, need - resp->len);
            ssize_t n = read(w->from, resp->data + resp->len, need - resp->len);
            if (n == 0) {
                return IO_EOF;
            }
            if (n < 0 && errno != EINTR && errno != EAGAIN) {
                return IO_DIED;
            }
            resp->len += n > 0 ? (size_t)n : 0;
            if (resp->len == 4 && need == 4) {
                uint32_t len = fk_get_u32(resp->data);
                if (len > MAX_RESPONSE) {
                    return IO_TOO_LARGE;
                }
                need = 4 + (size_t)len;
            }
        }
    }
    (void)r;
    return IO_DONE;
}

static void set_output(fk_exec *out, const uint8_t *p, size_t n, size_t cap, fk_str *dst, uint8_t flag) {
    if (n > cap) {
        n = cap;
        out->flags |= flag;
    }
    *dst = fk_str_dup((const char *)p, n);
}

void fk_worker_run(fk_runner *r, uint64_t task_id, const fk_spec *spec, const fk_ext *x, char *const *extra_env,
                   const char *workdir, fk_exec *out) {
    int64_t started = fk_now_micros();
    fk_reader rd;
    fk_reader_init(&rd, (const uint8_t *)x->value.s, x->value.len);
    uint32_t n = fk_rd_count(&rd, "worker command", 4);
    fk_str *command = calloc(n ? n : 1, sizeof(fk_str));
    if (!command) {
        abort();
    }
    size_t got = 0;
    for (; got < n && fk_reader_ok(&rd); got++) {
        command[got].s = fk_rd_str(&rd, "worker command", &command[got].len);
    }
    size_t npayload = 0;
    const uint8_t *payload = fk_rd_blob(&rd, "worker payload", &npayload);
    fk_rd_end(&rd, "worker");
    fk_buf key, req, resp;
    fk_buf_init(&key);
    fk_buf_init(&req);
    fk_buf_init(&resp);
    if (!fk_reader_ok(&rd) || n == 0 || command[0].len == 0) {
        fk_exec_fail(out, FK_LAUNCH_FAILED, started,
                     fk_str_printf("ext WORKER: %s", fk_reader_ok(&rd) ? "the worker command has no program" : rd.err));
        out->flags |= FK_FLAG_PERMANENT;
        goto done;
    }
    key_of(command, n, spec, &key);
    if (r->worker && (r->worker->key.len != key.len || memcmp(r->worker->key.data, key.data, key.len) != 0)) {
        fk_info("replacing worker (pid %d): the next task names another command or environment", (int)r->worker->pid);
        end_worker(r);
    }
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (r->worker && waitid(P_PID, (id_t)r->worker->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid != 0) {
        fk_info("replacing worker (pid %d): it left while idle", (int)r->worker->pid); /* not this task's doing */
        end_worker(r);
    }
    if (!r->worker) {
        int rc = start_worker(r, command, n, spec, &key);
        if (rc != 0) {
            fk_exec_fail(out, FK_LAUNCH_FAILED, started,
                         fk_str_printf("cannot start worker %s: %s", command[0].s, strerror(rc)));
            if (rc == ENOENT || rc == EACCES || rc == ENOTDIR || rc == ENOEXEC) {
                out->flags |= FK_FLAG_PERMANENT;
            }
            goto done;
        }
    }
    struct fk_worker *w = r->worker;
    fk_affinity_set_process(w->pid, r->confine ? &r->cpus : NULL);
    const char *dir = spec->workdir.len ? spec->workdir.s : workdir ? workdir : r->workdir;
    fk_worker_request(&req, task_id, (uint32_t)r->cap, spec, extra_env, dir, payload, npayload);
    pthread_mutex_lock(&r->lock);
    int closed = r->closed;
    r->task = task_id;
    r->pid = closed ? 0 : w->pid;
    r->active = !closed;
    r->cancelled = 0;
    r->timed_out = 0;
    pthread_mutex_unlock(&r->lock);
    if (closed) { /* the executor is stopping: a cancel may have missed this task */
        fk_exec_fail(out, FK_CANCELLED, started, fk_str_of("the executor is stopping"));
        goto done;
    }
    int io = exchange(r, w, &req, &resp, spec->wall_ms ? fk_mono_millis() + spec->wall_ms : -1);
    pthread_mutex_lock(&r->lock);
    if (io == IO_TIMEOUT) {
        r->timed_out = 1;
    }
    int cancelled = r->cancelled, timed_out = r->timed_out;
    r->active = 0;
    r->pid = 0;
    pthread_mutex_unlock(&r->lock);
    fk_worker_response resp_fields;
    char why[300] = "";
    if (io == IO_DONE && fk_worker_response_decode(resp.data + 4, resp.len - 4, &resp_fields, why, sizeof why) == 0
        && resp_fields.task_id != task_id) {
        snprintf(why, sizeof why, "answered task %llu when asked for task %llu",
                 (unsigned long long)resp_fields.task_id, (unsigned long long)task_id);
    }
    if (timed_out) {
        end_worker(r);
        fk_exec_fail(out, FK_TIMEOUT, started, fk_str_printf("wall time %u ms exceeded; worker killed", spec->wall_ms));
    } else if (cancelled) {
        end_worker(r);
        fk_exec_fail(out, FK_CANCELLED, started, fk_str_of("cancelled"));
    } else if (io == IO_TOO_LARGE || (io == IO_DONE && why[0])) {
        end_worker(r);
        fk_exec_fail(out, FK_LAUNCH_FAILED, started,
                     fk_str_printf("worker %s broke the framing (docs/protocol.md section 9): %s; it was replaced",
                                   command[0].s, io == IO_TOO_LARGE ? "a response over 16 MiB" : why));
        out->flags |= FK_FLAG_PERMANENT;
    } else if (io == IO_DIED || io == IO_EOF) {
        /* no answer: the task fails (a worker that exits 0 without answering has not run it) */
        int alive = !exited_within(w->pid, 1000);
        int status = end_worker(r);
        char what[200];
        if (alive) {
            snprintf(what, sizeof what, "closed its standard %s without answering task %llu; it was killed",
                     io == IO_EOF ? "output" : "input", (unsigned long long)task_id);
        } else if (WIFSIGNALED(status)) {
            snprintf(what, sizeof what, "was killed by signal %d before answering task %llu", WTERMSIG(status),
                     (unsigned long long)task_id);
        } else {
            snprintf(what, sizeof what, "exited (exit status %d) without answering task %llu", WEXITSTATUS(status),
                     (unsigned long long)task_id);
        }
        fk_exec_fail(out, FK_LAUNCH_FAILED, started,
                     fk_str_printf("worker %s %s; a new one serves the next task", command[0].s, what));
        out->flags |= FK_FLAG_PERMANENT;
    } else {
        memset(out, 0, sizeof *out);
        out->status = FK_EXITED;
        out->exit_code = resp_fields.exit_code;
        out->started_us = started;
        out->finished_us = fk_now_micros();
        set_output(out, resp_fields.out, resp_fields.nout, r->cap, &out->out, FK_FLAG_STDOUT_TRUNCATED);
        set_output(out, resp_fields.err, resp_fields.nerr, r->cap, &out->err, FK_FLAG_STDERR_TRUNCATED);
        out->detail = fk_str_dup("", 0);
        w->served++;
        int64_t rss = r->worker_max_mib > 0 ? resident_mib(w->pid) : 0;
        if (r->worker_max_tasks > 0 && w->served >= r->worker_max_tasks) {
            fk_info("replacing worker %s (pid %d): it served %d tasks", command[0].s, (int)w->pid, w->served);
            end_worker(r);
        } else if (r->worker_max_mib > 0 && rss > r->worker_max_mib) {
            fk_info("replacing worker %s (pid %d): %lld MiB resident, over %lld", command[0].s, (int)w->pid,
                    (long long)rss, (long long)r->worker_max_mib);
            end_worker(r);
        }
    }
done:
    for (size_t i = 0; i < got; i++) {
        free(command[i].s);
    }
    free(command);
    fk_buf_free(&key);
    fk_buf_free(&req);
    fk_buf_free(&resp);
}
