"""What the Falkon executor costs the submitting process per python_app, without the DataFlowKernel.

    python executor_cost.py [--tasks N] [--rounds R]     (in a virtualenv with Parsl and this package)

Calls ``FalkonExecutor.submit`` directly, N times, with parsl-perf's app and arguments, then waits for
every result; prints per round the process's CPU per task (all its threads: the submitting one, the
client's reader and sender) and the rate. The DataFlowKernel itself costs the same process about a
millisecond per app on this machine, so this is the share the executor adds to it
(docs/benchmarks.md, "Parsl's python_apps"). The first round includes the workers' start.
"""

import argparse
import importlib.util
import os
import time

import parsl

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(os.path.dirname(HERE), "src", "falkon", "parsl", "falkon_config.py")


def app(extra_payload, parsl_resource_specification={}):  # parsl-perf's app, undecorated
    return 7


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", type=int, default=10000)
    p.add_argument("--rounds", type=int, default=4)
    a = p.parse_args()
    spec = importlib.util.spec_from_file_location("falkon_config", CONFIG)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    config = module.fresh_config()
    config.initialize_logging = False
    with parsl.load(config) as dfk:
        executor = next(e for e in dfk.executors.values() if e.label != "_parsl_internal")
        for r in range(a.rounds):
            cpu0, wall0 = time.process_time(), time.perf_counter()
            futures = [executor.submit(app, {}, "") for _ in range(a.tasks)]
            for f in futures:
                assert f.result() == 7
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
            print(f"round {r}: {1e6 * cpu / a.tasks:6.1f} us of CPU per task, {a.tasks / wall:7.0f} tasks/s")


if __name__ == "__main__":
    main()
