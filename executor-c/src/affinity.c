#include "affinity.h"

#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

static cpu_set_t task_set; /* the executor's own set: what every task runs with */
static int pinned;

int fk_affinity_decide(int mode, int slots, int cpus) {
    if (mode == FK_PIN_ON) {
        return cpus > 0;
    }
    return mode == FK_PIN_AUTO && cpus > 1 && slots == cpus;
}

int fk_affinity_init(int mode, int slots, int *cpus) {
    *cpus = 0;
    if (sched_getaffinity(0, sizeof task_set, &task_set) != 0) {
        fk_warn("cannot read the executor's CPU set (%s): slots are not pinned", strerror(errno));
        return pinned = 0;
    }
    *cpus = CPU_COUNT(&task_set);
    return pinned = fk_affinity_decide(mode, slots, *cpus);
}

/* The CPU number of a slot: the slot-th CPU of the executor's set, modulo its size. */
static int cpu_of_slot(int slot) {
    int want = slot % CPU_COUNT(&task_set), seen = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, &task_set) && seen++ == want) {
            return cpu;
        }
    }
    return -1;
}

void fk_affinity_pin_slot(int slot) {
    if (!pinned) {
        return;
    }
    int cpu = cpu_of_slot(slot);
    if (cpu >= 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        int rc = pthread_setaffinity_np(pthread_self(), sizeof one, &one);
        if (rc != 0) {
            fk_warn("slot %d: cannot keep to CPU %d (%s); it runs unpinned", slot, cpu, strerror(rc));
        }
    }
}

int fk_affinity_cpus_of(const int *slots, int n, cpu_set_t *out) {
    if (!pinned || n < 1) {
        return 0;
    }
    CPU_ZERO(out);
    for (int i = 0; i < n; i++) {
        int cpu = cpu_of_slot(slots[i]);
        if (cpu >= 0) {
            CPU_SET(cpu, out);
        }
    }
    return CPU_COUNT(out) > 0;
}

void fk_affinity_release_child(void) {
    if (pinned) {
        sched_setaffinity(0, sizeof task_set, &task_set); /* on failure the task keeps the slot's CPU */
    }
}

void fk_affinity_set_process(pid_t pid, const cpu_set_t *cpus) {
    if (cpus) {
        sched_setaffinity(pid, sizeof *cpus, cpus);
    } else if (pinned) {
        sched_setaffinity(pid, sizeof task_set, &task_set);
    }
}
