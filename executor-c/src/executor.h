/* The C executor: dials the dispatcher, registers its slots, runs the tasks it is sent, and
 * returns results with their credits (docs/protocol.md). Same behaviour as the Java executor:
 * reconnects with back-off when the dispatcher goes away, exits when it shuts down on purpose. */
#ifndef FK_EXECUTOR_H
#define FK_EXECUTOR_H

#include <stdint.h>

#define FK_AGENT "falkon-c/0.1.0"
/* --prefetch auto: none at first, none while tasks are long (mean >= 100 ms) or with a data cache;
 * once they are seen to be short, about 40 ms of work per slot (1 to 64; reports.c) */
#define FK_PREFETCH_AUTO (-1)

typedef struct {
    const char *host;
    int port;               /* 0 with --dispatcher stdio */
    const char *where;      /* the dispatcher as --dispatcher named it (HOST:PORT, or stdio), for messages */
    int stdio_in, stdio_out; /* --dispatcher stdio: the pipes from and to the parent (else -1) */
    const char *id;
    int slots;
    int64_t memory_mib;     /* memory it advertises for tasks' stated needs (--memory; default: the node's) */
    int64_t disk_mib;       /* scratch space it advertises (--disk; default: free in the workdir's file system) */
    int pin_slots;          /* enum fk_pin: keep each slot thread on one CPU (affinity.h) */
    int prefetch;           /* tasks held beyond the free slots; FK_PREFETCH_AUTO: as the Java executor's auto */
    int no_exec;            /* BENCHMARKING ONLY: complete tasks without running them */
    uint32_t output_cap;
    int worker_max_tasks;   /* replace a persistent worker after this many tasks (0: never) */
    int64_t worker_max_mib; /* ... or when its resident memory passes this after a task (0: never) */
    const char *workdir;
    const char *token;      /* the deployment's token, presented to the dispatcher and required by the cache server */
    int tls;                /* connect over TLS */
    const char *tls_ca;     /* with tls: the CA certificates (PEM) to trust; NULL: the system's */
    int reconnect_for_s;    /* after losing the dispatcher, keep dialling this long; 0: exit */
    int64_t idle_exit_ms;   /* leave after holding no task this long (distributed release); 0: never */
    int64_t cache_size;     /* 0: no cache */
    const char *cache_dir;  /* NULL: under the spool directory */
    const char *store;      /* root of the shared store for relative sources, or NULL */
    const char *output_dir; /* where declared outputs are saved (ROOT/ID); NULL: the store root */
    int revalidate;         /* enum fk_revalidate: when a cached copy is checked against its store file */
    int cache_port;
    const char *cache_host;
    int64_t uplink_bps;     /* --emulate-uplink (benchmarking only): the cache server's send rate cap; 0: none */
    struct fk_resources *resources; /* --resource and the GPUs found (resources.h); slots.c keeps who holds what */
} fk_config;

/* Runs until the dispatcher shuts down, the executor gives up reconnecting, or SIGTERM/SIGINT.
 * Returns the process exit status: 0, or 2 when the first connection or registration fails. */
int fk_executor_run(const fk_config *cfg);

#endif
