"""bash_app and python_app throughput through Parsl, and parsl-perf: the Falkon executor against HTEX, same run.

    python parsl_throughput.py [--tasks N] [--python-tasks N] [--rounds R] [--perf-seconds S] [--perf-tasks N]
                                                            (in a virtualenv with Parsl and this package)

Then ``parsl-perf --config CONFIG --time S`` (Parsl's own benchmark: a python_app returning 7) for each, and
``parsl-perf --iterate 10,N`` (the same last batch of N tasks for every executor).
For python_apps the last column is Parsl's ThreadPoolExecutor (threads_config.py): apps run in the
submitting process, so it is the ceiling the DataFlowKernel itself allows on this machine.
Each measurement is a fresh Parsl run in its own process: N apps submitted at once, timed from the first
submission to the last result, best of R rounds after one warm-up round. Both executors use their defaults
on this machine: HTEX with a LocalProvider block (one worker per core), Falkon with the dispatcher and the
executor it starts itself (as `falkon run` would). Figures are printed, never asserted (docs/benchmarks.md).
"""

import argparse
import json
import os
import subprocess
import sys
import time


HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = {"htex": os.path.join(HERE, "htex_config.py"),
           "falkon": os.path.join(os.path.dirname(HERE), "src", "falkon", "parsl", "falkon_config.py"),
           "threads": os.path.join(HERE, "threads_config.py")}


def configure(name, log_to_file=True):
    """The config of ``CONFIGS[name]``; ``log_to_file=False`` turns off Parsl's DEBUG log file (parsl.log)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"bench_{name}_config", CONFIGS[name])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    config = module.fresh_config()
    config.initialize_logging = log_to_file
    return config


def parsl_perf(name, seconds=None, iterate=None):
    """parsl-perf's figure (a python_app returning 7) for a config: the last "Tasks per second" it prints,
    run for ``seconds`` (its own estimate of the last batch's size) or over the batch sizes ``iterate``."""
    mode = ["--time", str(seconds)] if iterate is None else ["--iterate", iterate]
    out = subprocess.run(["parsl-perf", "--config", CONFIGS[name], *mode], check=True,
                         capture_output=True, text=True, cwd=os.environ.get("TMPDIR", "/tmp")).stdout
    rates = [float(line.split(":")[1]) for line in out.splitlines() if line.startswith("Tasks per second:")]
    return rates[-1]


def measure(name, kind, tasks, rounds, log_to_file):
    import parsl

    @parsl.bash_app
    def bash_true():
        return "true"

    @parsl.python_app
    def py_seven():
        return 7

    app = bash_true if kind == "bash" else py_seven
    rates = []
    with parsl.load(configure(name, log_to_file)):
        [f.result() for f in [app() for _ in range(min(tasks, 200))]]  # warm-up: workers up, zygote forked
        for _ in range(rounds):
            start = time.perf_counter()
            futures = [app() for _ in range(tasks)]
            for f in futures:
                f.result()
            rates.append(tasks / (time.perf_counter() - start))
    return max(rates)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", type=int, default=3000, help="bash_apps per round")
    p.add_argument("--python-tasks", type=int, default=2000, help="python_apps per round")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--kinds", default="bash,python")
    p.add_argument("--no-log-file", action="store_true", help="turn Parsl's DEBUG log file off (both executors)")
    p.add_argument("--perf-seconds", type=float, default=20, help="parsl-perf's --time (0: skip parsl-perf)")
    p.add_argument("--perf-tasks", type=int, default=5000,
                   help="also parsl-perf with a last batch of this many tasks for every executor (0: skip)")
    p.add_argument("--one", nargs=2, metavar=("EXECUTOR", "KIND"), help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.one:
        print(json.dumps({"rate": measure(a.one[0], a.one[1], a.tasks, a.rounds, not a.no_log_file)}))
        return
    rows = {}
    kinds = a.kinds.split(",")
    for kind in kinds:
        for name in ("htex", "falkon") + (("threads",) if kind == "python" else ()):
            n = a.tasks if kind == "bash" else a.python_tasks
            out = subprocess.run([sys.executable, __file__, "--one", name, kind, "--tasks", str(n),
                                  "--rounds", str(a.rounds)] + (["--no-log-file"] if a.no_log_file else []), check=True, capture_output=True, text=True,
                                 cwd=os.environ.get("TMPDIR", "/tmp")).stdout
            rows[(name, kind)] = json.loads(out.strip().splitlines()[-1])["rate"]
    if a.perf_seconds > 0:
        for name in ("htex", "falkon", "threads"):
            rows[(name, "parsl-perf")] = parsl_perf(name, a.perf_seconds)
        kinds.append("parsl-perf")
    # parsl-perf --time sizes its last batch by the rate of the one before, so a faster executor gets
    # a larger batch, and the DataFlowKernel's cost per task grows with the tasks it holds (with
    # ThreadPoolExecutor: about 1,040 tasks/s at 5,000 and 940 at 15,000, docs/benchmarks.md); the
    # same batch for every executor compares like with like
    if a.perf_tasks > 0:
        label = f"parsl-perf-{a.perf_tasks}"
        for name in ("htex", "falkon", "threads"):
            rows[(name, label)] = parsl_perf(name, iterate=f"10,{a.perf_tasks}")
        kinds.append(label)
    # the last column: Parsl's own ThreadPoolExecutor in the submitting process, the ceiling of what
    # the DataFlowKernel itself reaches here (no executor in the way)
    print(f"{'measure':16} {'HTEX tasks/s':>14} {'Falkon tasks/s':>16} {'Falkon/HTEX':>12} {'DFK alone':>10}")
    for kind in kinds:
        h, f = rows[("htex", kind)], rows[("falkon", kind)]
        t = rows.get(("threads", kind))
        label = kind if kind.startswith("parsl-perf") else f"{kind}_app x{a.tasks if kind == 'bash' else a.python_tasks}"
        print(f"{label:16} {h:14,.0f} {f:16,.0f} {f / h:12.2f} {f'{t:,.0f}' if t else '-':>10}")


if __name__ == "__main__":
    main()
