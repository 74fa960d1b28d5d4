/* falkon-executor-c: the command line of the C executor. Options match `falkon executor`
 * (docs/cli.md) so the two executors are interchangeable on a compute node. */
#include "affinity.h"
#include "cache.h"
#include "conn.h"
#include "executor.h"
#include "log.h"
#include "resources.h"
#include "runner.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f) {
    fprintf(f,
            "Usage: falkon-executor-c --dispatcher HOST:PORT [options]\n"
            "Run an executor: it dials the dispatcher and runs the tasks it is sent.\n\n"
            "  --dispatcher HOST:PORT  the dispatcher (required); stdio: the process that started this one,\n"
            "                          on its standard input and output (falkon run's own executors)\n"
            "  --slots N               tasks run at once (default: the CPUs it may use)\n"
            "  --pin-slots auto|on|off keep each slot's thread on one CPU, so that a task's start and\n"
            "                          exit stay on one core; tasks still get every CPU (default: auto:\n"
            "                          on with one slot per CPU the executor may use)\n"
            "  --memory SIZE           memory offered to tasks that state theirs, e.g. 8g or 4096m\n"
            "                          (default: the node's physical memory)\n"
            "  --disk SIZE             scratch space offered to tasks that state theirs, e.g. 100g\n"
            "                          (default: the free space of --workdir's file system at start)\n"
            "  --resource NAME=INDICES|COUNT  a named resource offered to tasks that ask for it: devices\n"
            "                          (gpus=0,1,2,3; one device: gpus=[0]) or a count (license=4); repeatable.\n"
            "                          GPUs are found by themselves (nvidia-smi, rocm-smi, an inherited\n"
            "                          CUDA_VISIBLE_DEVICES or ROCR_VISIBLE_DEVICES) unless gpus=... is given;\n"
            "                          gpus=0 offers none\n"
            "  --worker-max-tasks N    replace a persistent worker after N tasks (default: 0 = never)\n"
            "  --worker-max-memory SIZE replace a persistent worker whose resident memory is over SIZE\n"
            "                          after a task, e.g. 2g (default: no bound)\n"
            "  --no-exec               BENCHMARKING ONLY: complete tasks without running them\n"
            "  --id ID                 executor id, unique per dispatcher (default: host-pid-1)\n"
            "  --output-cap BYTES      bytes of stdout and of stderr kept per task (default: 65536)\n"
            "  --workdir DIR           working directory for tasks that do not set one (default: here)\n"
            "  --token-file FILE       read the dispatcher's token from FILE (default: $FALKON_TOKEN,\n"
            "                          $FALKON_TOKEN_FILE, else ~/.falkon/token)\n"
            "  --token TOKEN           the token itself (visible to ps: prefer the file or $FALKON_TOKEN)\n"
            "  --tls-ca PEM            connect over TLS, trusting the CA certificate(s) in PEM\n"
            "  --tls                   connect over TLS, trusting the system's CAs\n"
            "  --prefetch N|auto       tasks to hold beyond the free slots (default: auto: about 40 ms of\n"
            "                          work per slot, up to 64, once tasks are seen to be short; none\n"
            "                          while they are long or with a data cache)\n"
            "  --reconnect-for SECONDS after losing the dispatcher, keep dialling this long (default: 600;\n"
            "                          0 = exit at once)\n"
            "  --idle-exit SECONDS     leave after holding no task for this long (the provisioner's\n"
            "                          distributed release; default: 0 = never)\n"
            "  --cache-size BYTES      data cache capacity, e.g. 4g or 500m (default: none)\n"
            "  --cache-dir DIR         where the data cache lives (default: a temporary directory)\n"
            "  --eviction POLICY       cache eviction policy: lru (the only one the C executor has)\n"
            "  --store DIR             the shared store's root, for relative input sources\n"
            "  --output-dir DIR        where declared outputs are saved, as DIR/ID, before their task is\n"
            "                          reported successful (default: the --store root)\n"
            "  --revalidate WHEN       check a cached copy against its store file before each use: stat\n"
            "                          (size and modification time, default) or never (ids are immutable)\n"
            "  --cache-port PORT       port of the cache server peers fetch from (default: any free one)\n"
            "  --cache-host HOST       the address peers should use for this node's cache server\n"
            "  --emulate-uplink RATE   BENCHMARKING ONLY: the cache server sends at most RATE bytes/s over\n"
            "                          all its connections together, e.g. 100m (an emulated network link)\n"
            "  --log-level LEVEL       debug, info, warn or error (default: info)\n"
            "  -v, --verbose           the same as --log-level debug\n"
            "  -h, --help              show this help\n"
            "  -V, --version           print the version\n");
}

static int bad(const char *what, const char *value) {
    fprintf(stderr, "falkon-executor-c: %s: '%s'\n", what, value);
    return 2;
}

/* The first line of a token file, trimmed; NULL (with why) when it cannot be read or is empty. */
static char *read_token(const char *file, char *why, size_t whylen) {
    FILE *f = fopen(file, "r");
    if (!f) {
        snprintf(why, whylen, "cannot read the token file %s: %s", file, strerror(errno));
        return NULL;
    }
    static char line[4096];
    char *ok = fgets(line, sizeof line, f);
    fclose(f);
    if (!ok) {
        line[0] = 0;
    }
    size_t n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t')) {
        line[--n] = 0;
    }
    char *start = line;
    while (*start == ' ' || *start == '\t') {
        start++;
    }
    if (!*start) {
        snprintf(why, whylen, "the token file %s is empty", file);
        return NULL;
    }
    return start;
}

/* Started by a launcher process (falkon executor --impl c run by a JVM): $FALKON_PARENT_PID names
 * it, and this executor gets SIGTERM when it dies, SIGKILL included, instead of living on registered
 * and taking tasks (its slots then stop as on any SIGTERM). -1 when the launcher is gone already. */
static int tie_to_launcher(void) {
    const char *parent = getenv("FALKON_PARENT_PID");
    if (!parent || !*parent) {
        return 0;
    }
    char *end;
    long pid = strtol(parent, &end, 10);
    unsetenv("FALKON_PARENT_PID"); /* the executor's own business: not its tasks' */
    if (*end || pid <= 0) {
        return 0;
    }
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) {
        return 0;
    }
    if (getppid() != (pid_t)pid) {
        fprintf(stderr, "falkon-executor-c: the process that started it (%ld) is gone; not starting\n", pid);
        return -1;
    }
    return 0;
}

/* --dispatcher stdio: the protocol's bytes come on standard input and go out on standard output.
 * Both move to descriptors of their own (close-on-exec, non-blocking), and 0 and 1 become /dev/null
 * and standard error: no task, tool or stray printf can then read or write the dispatcher's frames. */
static int take_stdio(fk_config *cfg, char *why, size_t whylen) {
    int in = fcntl(0, F_DUPFD_CLOEXEC, 3);
    int out = fcntl(1, F_DUPFD_CLOEXEC, 3);
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in < 0 || out < 0 || null < 0 || dup2(null, 0) < 0 || dup2(2, 1) < 0
        || fcntl(in, F_SETFL, fcntl(in, F_GETFL) | O_NONBLOCK) != 0
        || fcntl(out, F_SETFL, fcntl(out, F_GETFL) | O_NONBLOCK) != 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        return -1;
    }
    close(null);
    cfg->stdio_in = in;
    cfg->stdio_out = out;
    return 0;
}

/* No token anywhere yet, on an account where the dispatcher writes ~/.falkon/token on its first
 * start: started beside it (a batch script), the executor waits until something listens at the
 * dispatcher's address, then looks again (what it builds, the peer cache server included, needs the
 * token from the start; with a token at hand the session itself waits). 0, or -1 when it gave up. */
static int await_dispatcher(const fk_config *cfg) {
    int64_t deadline = fk_mono_millis() + (int64_t)cfg->reconnect_for_s * 1000;
    char why[300];
    for (int attempt = 0;; attempt++) {
        if (fk_probe(cfg->host, cfg->port, 5000, why, sizeof why) == 0) {
            return 0;
        }
        if (attempt == 0) {
            fprintf(stderr, "falkon-executor-c: no dispatcher at %s yet (%s); dialling again for up to %d s\n",
                    cfg->where, why, cfg->reconnect_for_s);
        }
        if (fk_mono_millis() >= deadline) {
            fprintf(stderr, "falkon-executor-c: cannot connect to dispatcher at %s within %d s: %s\n", cfg->where,
                    cfg->reconnect_for_s, why);
            return -1;
        }
        int shift = attempt < 6 ? attempt : 6; /* 100 ms doubling to 6.4 s, as the session backs off */
        struct timespec ts = {.tv_sec = (100L << shift) / 1000, .tv_nsec = ((100L << shift) % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* Where every Falkon command looks for the token: the option, the file option, $FALKON_TOKEN,
 * $FALKON_TOKEN_FILE, then $FALKON_HOME/token (~/.falkon/token) if it is there. "" when nowhere.
 * NULL (with why) when a named file cannot be read. */
static const char *resolve_token(const char *option, const char *file, char *why, size_t whylen) {
    if (option && *option) {
        return option;
    }
    if (file) {
        return read_token(file, why, whylen);
    }
    const char *env = getenv("FALKON_TOKEN");
    if (env && *env) {
        return env;
    }
    const char *envfile = getenv("FALKON_TOKEN_FILE");
    if (envfile && *envfile) {
        return read_token(envfile, why, whylen);
    }
    static char def[PATH_MAX];
    const char *home = getenv("FALKON_HOME");
    if (home && *home) {
        snprintf(def, sizeof def, "%s/token", home);
    } else {
        /* $HOME as every Unix tool reads it; the password database only when it is unset (the
         * rule of every Falkon component: docs/security.md) */
        const char *h = getenv("HOME");
        if (!h || !*h) {
            struct passwd *pw = getpwuid(getuid());
            h = pw && pw->pw_dir ? pw->pw_dir : "/";
        }
        snprintf(def, sizeof def, "%s/.falkon/token", h);
    }
    if (access(def, R_OK) == 0) {
        return read_token(def, why, whylen);
    }
    return "";
}

/* One of a few words: sets *out to the value paired with it; -1 when s is none of them. */
typedef struct {
    const char *word;
    int value;
} choice;

static int parse_choice(const char *s, const choice *choices, size_t n, int *out) {
    for (size_t i = 0; i < n; i++) {
        if (strcmp(s, choices[i].word) == 0) {
            *out = choices[i].value;
            return 0;
        }
    }
    return -1;
}

static int parse_int(const char *s, long min, long max, long *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max) {
        return -1;
    }
    *out = v;
    return 0;
}

/* Byte counts as people write them: 1048576, 512k, 500m, 4g, 1t (as the Java executor). */
static int parse_bytes(const char *text, int64_t *out) {
    char t[64];
    size_t n = strlen(text);
    if (n == 0 || n >= sizeof t) {
        return -1;
    }
    for (size_t i = 0; i <= n; i++) {
        t[i] = (char)tolower((unsigned char)text[i]);
    }
    if (n > 0 && t[n - 1] == 'b') {
        t[--n] = 0;
    }
    double unit = 1;
    if (n > 0) {
        switch (t[n - 1]) {
        case 'k': unit = 1024.0; break;
        case 'm': unit = 1048576.0; break;
        case 'g': unit = 1073741824.0; break;
        case 't': unit = 1099511627776.0; break;
        default: break;
        }
        if (unit > 1) {
            t[--n] = 0;
        }
    }
    char *end;
    double v = strtod(t, &end);
    if (end == t || *end || v < 0 || isnan(v) || v * unit > 9.2e18) {
        return -1;
    }
    *out = (int64_t)(v * unit);
    return 0;
}

int main(int argc, char **argv) {
    static const struct option opts[] = {
        {"dispatcher", required_argument, 0, 'd'}, {"slots", required_argument, 0, 's'},
        {"pin-slots", required_argument, 0, 'X'}, {"memory", required_argument, 0, 'M'},
        {"disk", required_argument, 0, 'D'},
        {"worker-max-tasks", required_argument, 0, 'k'}, {"worker-max-memory", required_argument, 0, 'm'},
        {"no-exec", no_argument, 0, 'n'},          {"id", required_argument, 0, 'i'},
        {"output-cap", required_argument, 0, 'o'}, {"workdir", required_argument, 0, 'w'},
        {"token", required_argument, 0, 't'},      {"prefetch", required_argument, 0, 'p'},
        {"token-file", required_argument, 0, 'T'}, {"tls-ca", required_argument, 0, 'A'},
        {"tls", no_argument, 0, 'Y'},
        {"reconnect-for", required_argument, 0, 'r'}, {"cache-size", required_argument, 0, 'c'},
        {"idle-exit", required_argument, 0, 'I'},
        {"cache-dir", required_argument, 0, 'C'},  {"eviction", required_argument, 0, 'e'},
        {"store", required_argument, 0, 'S'},      {"cache-port", required_argument, 0, 'P'},
        {"output-dir", required_argument, 0, 'O'}, {"revalidate", required_argument, 0, 'W'},
        {"cache-host", required_argument, 0, 'H'}, {"verbose", no_argument, 0, 'v'}, {"log-level", required_argument, 0, 'L'},
        {"emulate-uplink", required_argument, 0, 'U'}, {"resource", required_argument, 0, 'R'},
        {"help", no_argument, 0, 'h'},             {"version", no_argument, 0, 'V'},
        {0, 0, 0, 0}};
    fk_config cfg;
    memset(&cfg, 0, sizeof cfg);
    /* the CPUs this process may use (a batch job's allocation, taskset), as the JVM counts them */
    cpu_set_t mine;
    long cores = sched_getaffinity(0, sizeof mine, &mine) == 0 ? CPU_COUNT(&mine) : sysconf(_SC_NPROCESSORS_ONLN);
    cfg.slots = cores > 0 ? (int)cores : 1;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    cfg.memory_mib = pages > 0 && page > 0 ? (int64_t)pages * page / (1024 * 1024) : 0;
    cfg.output_cap = 64 * 1024;
    cfg.revalidate = FK_REVALIDATE_STAT;
    cfg.prefetch = FK_PREFETCH_AUTO;
    cfg.reconnect_for_s = 600;
    const char *token = NULL, *token_file = NULL;
    const char *dispatcher = NULL;
    int level = FK_LOG_INFO;
    long v;
    int64_t bytes;
    int c;
    static fk_resources resources;
    char why[600];
    while ((c = getopt_long(argc, argv, "vhV", opts, NULL)) != -1) {
        switch (c) {
        case 'd': dispatcher = optarg; break;
        case 's':
            if (parse_int(optarg, 1, 4096, &v) != 0) {
                return bad("--slots must be 1..4096", optarg);
            }
            cfg.slots = (int)v;
            break;
        case 'X':
        {
            static const choice pins[] = {{"auto", FK_PIN_AUTO}, {"on", FK_PIN_ON}, {"off", FK_PIN_OFF}};
            if (parse_choice(optarg, pins, 3, &cfg.pin_slots) != 0) {
                return bad("--pin-slots must be auto, on or off", optarg);
            }
            break;
        }
        case 'M':
            if (parse_bytes(optarg, &bytes) != 0 || bytes < 1024 * 1024 || bytes / (1024 * 1024) > 0xFFFFFFFFLL) {
                return bad("--memory must be a size of at least 1m, e.g. 8g or 4096m", optarg);
            }
            cfg.memory_mib = bytes / (1024 * 1024);
            break;
        case 'D':
            if (parse_bytes(optarg, &bytes) != 0 || bytes < 1024 * 1024 || bytes / (1024 * 1024) > 0xFFFFFFFFLL) {
                return bad("--disk must be a size of at least 1m, e.g. 100g or 4096m", optarg);
            }
            cfg.disk_mib = bytes / (1024 * 1024);
            break;
        case 'k':
            if (parse_int(optarg, 0, 1000000000, &v) != 0) {
                return bad("--worker-max-tasks must be 0..1000000000", optarg);
            }
            cfg.worker_max_tasks = (int)v;
            break;
        case 'm':
            if (parse_bytes(optarg, &bytes) != 0 || bytes < 1024 * 1024) {
                return bad("--worker-max-memory must be a size of at least 1m, e.g. 2g", optarg);
            }
            cfg.worker_max_mib = bytes / (1024 * 1024);
            break;
        case 'n': cfg.no_exec = 1; break;
        case 'i': cfg.id = optarg; break;
        case 'o':
            if (parse_bytes(optarg, &bytes) != 0 || bytes > 16 * 1024 * 1024) {
                return bad("--output-cap must be a size up to 16m", optarg);
            }
            cfg.output_cap = (uint32_t)bytes;
            break;
        case 'w': cfg.workdir = optarg; break;
        case 't': token = optarg; break;
        case 'T': token_file = optarg; break;
        case 'A': cfg.tls = 1; cfg.tls_ca = optarg; break;
        case 'Y': cfg.tls = 1; break;
        case 'p':
            if (strcmp(optarg, "auto") == 0) {
                cfg.prefetch = FK_PREFETCH_AUTO;
                break;
            }
            if (parse_int(optarg, 0, 100000, &v) != 0) {
                return bad("--prefetch must be auto or 0..100000", optarg);
            }
            cfg.prefetch = (int)v;
            break;
        case 'r':
            if (parse_int(optarg, 0, INT_MAX / 1000, &v) != 0) {
                return bad("--reconnect-for must be a number of seconds", optarg);
            }
            cfg.reconnect_for_s = (int)v;
            break;
        case 'I': {
            char *end = NULL;
            errno = 0;
            double secs = strtod(optarg, &end);
            if (errno != 0 || end == optarg || *end != '\0' || !(secs >= 0) || secs > 1e9) {
                return bad("--idle-exit must be a number of seconds >= 0", optarg);
            }
            cfg.idle_exit_ms = (int64_t)(secs * 1000 + 0.5);
            break;
        }
        case 'c':
            if (parse_bytes(optarg, &bytes) != 0 || bytes <= 0) {
                return bad("--cache-size is not a size (examples: 1048576, 512k, 500m, 4g)", optarg);
            }
            cfg.cache_size = bytes;
            break;
        case 'C': cfg.cache_dir = optarg; break;
        case 'e':
            if (strcmp(optarg, "lru") != 0) {
                return bad("--eviction: the C executor evicts in LRU order only (lfu, fifo and random are in the "
                           "Java executor)",
                           optarg);
            }
            break;
        case 'S': cfg.store = optarg; break;
        case 'O': cfg.output_dir = optarg; break;
        case 'W':
        {
            static const choice whens[] = {{"stat", FK_REVALIDATE_STAT}, {"never", FK_REVALIDATE_NEVER}};
            if (parse_choice(optarg, whens, 2, &cfg.revalidate) != 0) {
                return bad("--revalidate must be stat or never", optarg);
            }
            break;
        }
        case 'P':
            if (parse_int(optarg, 0, 65535, &v) != 0) {
                return bad("--cache-port must be 0..65535", optarg);
            }
            cfg.cache_port = (int)v;
            break;
        case 'H': cfg.cache_host = optarg; break;
        case 'R':
            if (fk_resources_add(&resources, optarg, why, sizeof why) != 0) {
                fprintf(stderr, "falkon-executor-c: %s\n", why);
                return 2;
            }
            break;
        case 'U':
            if (parse_bytes(optarg, &bytes) != 0 || bytes <= 0) {
                return bad("--emulate-uplink is not a rate in bytes per second (examples: 100m, 1g)", optarg);
            }
            cfg.uplink_bps = bytes;
            break;
        case 'v': level = FK_LOG_DEBUG; break;
        case 'L':
        {
            static const choice levels[] = {
                {"debug", FK_LOG_DEBUG}, {"info", FK_LOG_INFO}, {"warn", FK_LOG_WARN}, {"error", FK_LOG_ERROR}};
            if (parse_choice(optarg, levels, 4, &level) != 0) {
                return bad("--log-level must be debug, info, warn or error", optarg);
            }
            break;
        }
        case 'h': usage(stdout); return 0;
        case 'V': printf("%s\n", FK_AGENT); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        return bad("unexpected argument", argv[optind]);
    }
    cfg.token = resolve_token(token, token_file, why, sizeof why);
    if (!cfg.token) {
        fprintf(stderr, "falkon-executor-c: %s\n", why);
        return 2;
    }
    if (!dispatcher) {
        fprintf(stderr, "falkon-executor-c: --dispatcher HOST:PORT (or stdio) is required\n");
        usage(stderr);
        return 2;
    }
    cfg.where = dispatcher;
    static char host[256];
    cfg.stdio_in = cfg.stdio_out = -1;
    if (strcmp(dispatcher, "stdio") == 0) {
        if (cfg.tls) {
            return bad("--tls is for TCP: the pipes from the parent are not encrypted", dispatcher);
        }
        if (take_stdio(&cfg, why, sizeof why) != 0) {
            fprintf(stderr, "falkon-executor-c: --dispatcher stdio: %s\n", why);
            return 2;
        }
        cfg.where = "the parent process (stdio)";
        cfg.host = "stdio";
        cfg.port = 0;
        cfg.reconnect_for_s = 0; /* a pipe cannot be dialled again */
    } else {
        /* HOST:PORT, with [v6]:PORT for IPv6 literals */
        const char *colon = strrchr(dispatcher, ':');
        if (!colon || colon == dispatcher || (size_t)(colon - dispatcher) >= sizeof host
            || parse_int(colon + 1, 1, 65535, &v) != 0) {
            return bad("--dispatcher must be HOST:PORT or stdio", dispatcher);
        }
        const char *h = dispatcher;
        size_t hl = (size_t)(colon - dispatcher);
        if (h[0] == '[' && hl >= 2 && h[hl - 1] == ']') {
            h++;
            hl -= 2;
        }
        memcpy(host, h, hl);
        host[hl] = 0;
        cfg.host = host;
        cfg.port = (int)v;
    }
    if (!*cfg.token && cfg.port > 0 && cfg.reconnect_for_s > 0 && await_dispatcher(&cfg) != 0) {
        return 2;
    }
    cfg.token = resolve_token(token, token_file, why, sizeof why);
    if (!cfg.token) {
        fprintf(stderr, "falkon-executor-c: %s\n", why);
        return 2;
    }
    static char cwd[PATH_MAX];
    if (!cfg.workdir) {
        cfg.workdir = getcwd(cwd, sizeof cwd) ? cwd : "/";
    }
    if (cfg.disk_mib == 0) {
        /* what a task may write where it runs: the space free to this user, as df counts it */
        struct statvfs fs;
        cfg.disk_mib = statvfs(cfg.workdir, &fs) == 0 ? (int64_t)((uint64_t)fs.f_bavail * fs.f_frsize >> 20) : 0;
    }
    static char id[300];
    if (!cfg.id) {
        char hn[256] = "localhost";
        gethostname(hn, sizeof hn - 1);
        snprintf(id, sizeof id, "%s-%ld-1", hn, (long)getpid());
        cfg.id = id;
    }
    /* The token stays with the executor: tasks do not inherit it (a task that prints its
     * environment would put it in its output, results or the shared store). Copied first, as
     * it may point into the environment. */
    char *own_token = strdup(cfg.token);
    if (!own_token) {
        abort();
    }
    cfg.token = own_token;
    unsetenv("FALKON_TOKEN");
    if (tie_to_launcher() != 0) {
        free(own_token);
        return 1;
    }
    fk_log_setup(cfg.id, level);
    if (!cfg.no_exec) {
        /* after the log: what it offers is said there */
        fk_resources_ready(&resources, cfg.slots);
        for (size_t i = 0; i < resources.n; i++) {
            const fk_offer *o = &resources.items[i];
            char list[512] = "";
            for (size_t d = 0, at = 0; d < o->ndevices && at < sizeof list; d++) {
                at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", d ? "," : "", o->devices[d]);
            }
            fk_info("offering %s=%s%s%s", o->name, o->devices ? "[" : "",
                    o->devices ? list : "", o->devices ? "]" : "");
            if (!o->devices) {
                fk_info("  (%lld of them)", (long long)o->amount);
            }
        }
        cfg.resources = &resources;
    }
    int status = fk_executor_run(&cfg);
    fk_resources_destroy(&resources);
    free(own_token);
    return status;
}
