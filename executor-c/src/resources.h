/* Named resources (docs/cli.md "GPUs and other resources"), as the Java executor's ResourceOffer and
 * Devices: what the executor offers (--resource gpus=0,1,2,3 for devices, --resource license=4 for a
 * count; GPUs found by themselves), what a task asks (ext NAMED_RESOURCES: count:u16 then
 * name:str amount:u32, names sorted, each once), and which devices its running tasks hold. The
 * dispatcher keeps the count; this part picks the devices and hands them over in the task's
 * environment. Not thread-safe: slots.c calls it under the queue's lock. */
#ifndef FK_RESOURCES_H
#define FK_RESOURCES_H

#include "proto.h"

#include <stddef.h>
#include <stdint.h>

#define FK_RESOURCE_NAME_MAX 32
#define FK_RESOURCES_MAX 16
#define FK_RESOURCE_AMOUNT_MAX 1000000
#define FK_DEVICES_MAX 1024

typedef struct {
    char name[FK_RESOURCE_NAME_MAX + 1];
    char **devices;     /* device indices or ids, or NULL for a counted resource */
    size_t ndevices;
    int64_t amount;     /* the number of devices, or the count */
    int amd;            /* gpus only: ROCm's variables, not CUDA's */
    int64_t held;       /* units held by running tasks */
    unsigned char *taken; /* per device: held by a running task */
    int **last;         /* per slot: the devices its last task held (-1 ended), for the next one */
} fk_offer;

typedef struct fk_resources {
    fk_offer items[FK_RESOURCES_MAX];
    size_t n;
    int slots;
} fk_resources;

/* What a task asks: names sorted, each once. */
typedef struct {
    char name[FK_RESOURCES_MAX][FK_RESOURCE_NAME_MAX + 1];
    uint32_t amount[FK_RESOURCES_MAX];
    size_t n;
} fk_asked;

/* What one running task holds: per offer, the devices (or the units) to give back. */
typedef struct {
    int *devices[FK_RESOURCES_MAX];
    int64_t units[FK_RESOURCES_MAX];
} fk_grant;

/* Adds --resource OPTION (NAME=0,1,2 or NAME=[3]: devices; NAME=N: a count; gpus=0: no GPUs). 0, or -1
 * with why in err. */
int fk_resources_add(fk_resources *r, const char *option, char *err, size_t errlen);
/* Finds the GPUs (unless gpus was given): an inherited CUDA_VISIBLE_DEVICES or ROCR_VISIBLE_DEVICES is the
 * set, never widened; else nvidia-smi -L, then rocm-smi --showid. Then sorts the offers by name and sets
 * up the per-slot state. */
void fk_resources_ready(fk_resources *r, int slots);
/* Whether an executable called tool is in one of PATH's directories (the vendors' GPU tools). */
int fk_on_path(const char *tool);
void fk_resources_destroy(fk_resources *r);
/* The registration attribute "resources": gpus=4,license=2; empty when it offers none. */
void fk_resources_attribute(const fk_resources *r, char *out, size_t outlen);

/* The task's NAMED_RESOURCES field into a (a->n = 0 without one); -1 with why when it is malformed. */
int fk_asked_of(const fk_spec *spec, fk_asked *a, char *err, size_t errlen);
/* Why a could never be held here (NULL when it could): written into why. */
const char *fk_resources_problem(const fk_resources *r, const fk_asked *a, char *why, size_t whylen);
/* Whether everything a asks for is free now. */
int fk_resources_free(const fk_resources *r, const fk_asked *a);
/* Takes what a asks for on slot (it is free) and adds the variables that hand it over to spec's
 * environment (replacing the task's own of those names); a task that asks no GPUs on an executor that has
 * some gets variables that hide them. */
void fk_resources_take(fk_resources *r, const fk_asked *a, int slot, fk_spec *spec, fk_grant *g);
void fk_resources_give(fk_resources *r, fk_grant *g);

#endif
