/* Slot threads kept on one CPU each (--pin-slots). A slot thread and the task it starts hand the
 * CPU back and forth: vfork, the task's exit, the pipes closing, the wait. Left to the scheduler,
 * those wake-ups often land the slot thread or the task's children on the other, busy core while
 * this one goes idle (measured in docs/benchmarks.md). Pinned, each slot's chain stays on its core.
 * The task itself is not confined: its child restores the executor's own CPU set before exec, unless
 * it stated its cores (RESOURCES): then it gets the CPUs of the slots it took, that many of its own. */
#ifndef FK_AFFINITY_H
#define FK_AFFINITY_H

#include <sched.h>
#include <sys/types.h>

enum fk_pin { FK_PIN_AUTO = 0, FK_PIN_ON = 1, FK_PIN_OFF = 2 };

/* Whether slots are pinned: on, off, or auto = when there is one slot per CPU the executor may use
 * (it has the node, or its allocation, to itself) and more than one CPU. */
int fk_affinity_decide(int mode, int slots, int cpus);

/* Reads the executor's CPU set (what tasks get) and decides; returns whether slots are pinned, and
 * the number of CPUs in the set through *cpus. Call once, before the slot threads start. */
int fk_affinity_init(int mode, int slots, int *cpus);

/* In a slot thread, after fk_affinity_init chose to pin: keep this thread on the slot-th CPU of
 * the set (modulo its size). */
void fk_affinity_pin_slot(int slot);

/* The CPUs of the given slot indices (each the index-th CPU of the executor's set, modulo its size),
 * for a task that stated its cores; returns 0 (leaving *out alone) when slots are not pinned. */
int fk_affinity_cpus_of(const int *slots, int n, cpu_set_t *out);

/* In a task's child before exec (async-signal-safe: one system call): give it the executor's CPU
 * set back when its slot thread is pinned. */
void fk_affinity_release_child(void);

/* For a process that runs several tasks (a persistent worker), before each: the given CPUs (a task
 * that stated its cores), else the executor's set when slots are pinned. Failure leaves it as is. */
void fk_affinity_set_process(pid_t pid, const cpu_set_t *cpus);

#endif
