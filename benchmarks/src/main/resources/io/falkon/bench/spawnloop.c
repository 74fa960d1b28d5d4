/*
 * The physical limit Falkon's executors are measured against: P threads, each running a
 * posix_spawn + waitpid loop of PROGRAM, N spawns in all. Prints one line:
 *   spawnloop tasks=N spawners=P seconds=S tasksPerSecond=R
 * Usage: spawnloop N P PROGRAM [ARGS...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static char **program;
static long per_thread;
static long remainder_tasks;

static void *spawner(void *arg) {
    long n = per_thread + ((long)(size_t)arg < remainder_tasks ? 1 : 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", 0, 0);
    for (long i = 0; i < n; i++) {
        pid_t pid;
        int rc = posix_spawn(&pid, program[0], &fa, NULL, program, environ);
        if (rc != 0) {
            fprintf(stderr, "spawnloop: posix_spawn %s: %s\n", program[0], strerror(rc));
            exit(1);
        }
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    posix_spawn_file_actions_destroy(&fa);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: spawnloop N P PROGRAM [ARGS...]\n");
        return 2;
    }
    long total = atol(argv[1]);
    int threads = atoi(argv[2]);
    if (total < 1 || threads < 1) {
        fprintf(stderr, "spawnloop: N and P must be positive\n");
        return 2;
    }
    program = argv + 3;
    per_thread = total / threads;
    remainder_tasks = total % threads;
    pthread_t *t = calloc((size_t)threads, sizeof *t);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < threads; i++) {
        pthread_create(&t[i], NULL, spawner, (void *)(size_t)i);
    }
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double secs = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
    printf("spawnloop tasks=%ld spawners=%d seconds=%.6f tasksPerSecond=%.1f\n", total, threads, secs, total / secs);
    free(t);
    return 0;
}
