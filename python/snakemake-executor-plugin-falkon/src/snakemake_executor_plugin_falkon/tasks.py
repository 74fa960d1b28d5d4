"""How a Snakemake job becomes a Falkon task: the resources it states, and whether its command can
run as the task itself (no Snakemake started for it) or must go through Snakemake's job command.

Pure functions of the job's values, so that the mapping (docs/snakemake.md, "Jobs as tasks") is
tested on its own.
"""

import math

PRIORITY_MIN, PRIORITY_MAX = -2**31, 2**31 - 1   # Falkon's PRIORITY field: a signed 32-bit integer
_MIB = 1024 * 1024


def _whole(value, what):
    """A resource value as a whole number, or None when not stated; strings Snakemake left
    unevaluated (a size such as "5MB" stays in ``mem``, not ``mem_mb``) are not ours to parse."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError(f"resource {what} is negative: {value}")
        return value
    return None


def _mib(resources, mib_key, mb_key):
    """MiB from ``*_mib`` when Snakemake gives it, else from ``*_mb`` (10^6 bytes), rounded up."""
    mib = _whole(resources.get(mib_key), mib_key)
    if mib is not None:
        return int(math.ceil(mib))
    mb = _whole(resources.get(mb_key), mb_key)
    if mb is not None:
        return int(math.ceil(mb * 1_000_000 / _MIB))
    return None


def task_resources(threads, resources, priority=0, max_cores=None):
    """What a job of ``threads`` threads, these Snakemake ``resources`` and this ``priority`` asks of
    Falkon: a dict with ``cores`` (the slots it takes, from threads; at most ``max_cores`` when the
    executors' slots are known, since a task larger than every executor would never start),
    ``memory`` and ``disk`` in MiB (``mem_mib``/``mem_mb``, ``disk_mib``/``disk_mb``; None when not
    stated), ``walltime`` in seconds (``runtime``, in minutes as Snakemake states it; None when not
    stated) and ``priority`` (clamped into Falkon's 32-bit range: Snakemake gives
    ``--prioritize``d jobs ``sys.maxsize``), and ``gpus`` (the ``gpus`` or ``gpu`` resource, as
    Snakemake's GPU-aware executors spell it; None when not stated): devices of one executor of the
    job's own (docs/cli.md, "GPUs and other resources")."""
    cores = max(1, int(threads or 1))
    if max_cores is not None and cores > max_cores:
        cores = max_cores
    runtime = _whole(resources.get("runtime"), "runtime")
    gpus = _whole(resources.get("gpus", resources.get("gpu")), "gpus")
    return {
        "gpus": int(math.ceil(gpus)) if gpus else None,
        "cores": cores,
        "memory": _mib(resources, "mem_mib", "mem_mb"),
        "disk": _mib(resources, "disk_mib", "disk_mb"),
        "walltime": runtime * 60 if runtime else None,
        "priority": min(PRIORITY_MAX, max(PRIORITY_MIN, int(priority or 0))),
    }


def thread_environment(threads, tmpdir=None):
    """The variables Snakemake's own ``shell()`` sets for a job (snakemake/shell.py): the thread
    count for the usual numerical libraries, and the ``tmpdir`` resource as every spelling of the
    temporary directory."""
    n = str(max(1, int(threads or 1)))
    env = {name: n for name in ("OMP_NUM_THREADS", "GOTO_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")}
    if tmpdir:
        for name in ("TMPDIR", "TMP", "TEMPDIR", "TEMP"):
            env[name] = str(tmpdir)
    return env


def why_not_direct(job, deployment, cache_in_use=False):
    """None when ``job`` is a plain shell rule whose formatted command can be the task itself, else
    the reason it runs through Snakemake's job command instead. ``deployment`` is the set of
    deployment methods in use (names such as ``CONDA``, ``APPTAINER``, ``ENV_MODULES``);
    ``cache_in_use`` whether the workflow runs with ``--cache``.

    Plain means: one job (not a group), a ``shell:`` directive, and nothing Snakemake does around
    the command inside its own process: no conda environment, container or environment modules in
    use, no shadow directory, no benchmark, no between-workflow cache, no service or pipe."""
    if job.is_group():
        return "a group job"
    if not job.is_shell:
        return "not a shell rule"
    if "CONDA" in deployment and job.conda_env_spec:
        return "a conda environment"
    if "APPTAINER" in deployment and job.container_img_url:
        return "a container"
    if "ENV_MODULES" in deployment and job.env_modules:
        return "environment modules"
    if job.is_shadow:
        return "a shadow directory"
    if job.benchmark is not None:
        return "a benchmark"
    if cache_in_use and job.rule.cache and getattr(job.rule.cache, "output", None):
        return "the between-workflow cache"
    if getattr(job, "is_service", False) or getattr(job, "is_pipe", False):
        return "a service or pipe"
    return None
