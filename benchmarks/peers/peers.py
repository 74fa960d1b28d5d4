#!/usr/bin/env python3
"""Falkon beside today's peers, on one machine, in one run (run through run.sh).

Two workloads, W workers (one task at a time each) per system:
  true  -- every task runs /bin/true as a new process, in each system's own idiom:
           Dask: a Python task calling subprocess.run; Parsl: a bash_app; HyperQueue: a program
           task; Falkon: a task (command line) on W executors x 1 slot, Java and C executors.
  noop  -- the dispatch path alone: a Python function that returns None (Dask, Parsl), Falkon's
           no-exec executors. HyperQueue has no in-worker no-op (every task is a process), so it
           has no noop row.
Plus the physical limit for `true`: a C posix_spawn + waitpid loop with W spawners. And the tools a
user would reach for on one node, given the same file of N `/bin/true` lines (wall time of the
whole command, start-up included): `xargs -P W -I{} sh -c {}`, GNU parallel (`parallel -j W`, if
installed: Debian package `parallel`), and `falkon run FILE` with no options at all, with
`--executor c`, and the same tasks as a .jsonl file of args.
Security off everywhere (Parsl's HTEX encryption disabled), as in the papers' comparisons.
"""
import argparse
import csv
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from importlib import metadata


def measure(run, n, rounds):
    """Warm up with n/10 tasks, then return the median seconds of `rounds` runs of n tasks."""
    run(max(1, n // 10))
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        run(n)
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2]


def run_true():
    subprocess.run(["/bin/true"], check=True)


def noop():
    return None


def dask_rows(args):
    from dask.distributed import Client, LocalCluster, wait
    rows = []
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        for workload, fn, n in (("true", run_true, args.tasks), ("noop", noop, args.noop_tasks)):
            def run(k, fn=fn):
                futures = client.map(lambda i, fn=fn: fn(), range(k), pure=False)
                wait(futures)
                errors = [f for f in futures if f.status != "finished"]
                if errors:
                    raise RuntimeError(f"dask: {len(errors)} tasks failed")
                del futures
            rows.append(("dask", f"distributed {metadata.version('distributed')}", workload, n,
                         measure(run, n, args.rounds)))
    return rows


def parsl_rows(args, tmp):
    import parsl
    from parsl.app.app import bash_app, python_app
    from parsl.config import Config
    from parsl.executors import HighThroughputExecutor
    from parsl.providers import LocalProvider

    config = Config(executors=[HighThroughputExecutor(
        label="htex", max_workers_per_node=args.workers, encrypted=False, address="127.0.0.1",
        provider=LocalProvider(init_blocks=1, min_blocks=1, max_blocks=1))],
        run_dir=os.path.join(tmp, "parsl-runinfo"))

    @bash_app
    def true_app():
        return "/bin/true"

    @python_app
    def noop_app():
        return None

    rows = []
    parsl.load(config)
    try:
        for workload, app, n in (("true", true_app, args.tasks), ("noop", noop_app, args.noop_tasks)):
            def run(k, app=app):
                futures = [app() for _ in range(k)]
                for f in futures:
                    f.result()  # raises if the task failed
            rows.append(("parsl-htex", f"parsl {metadata.version('parsl')}", workload, n,
                         measure(run, n, args.rounds)))
    finally:
        parsl.dfk().cleanup()
        parsl.clear()
    return rows


def hq_rows(args, tmp):
    from hyperqueue import Job
    from hyperqueue.cluster import LocalCluster, WorkerConfig

    rows = []
    with LocalCluster(server_dir=os.path.join(tmp, "hq")) as cluster:
        cluster.start_worker(WorkerConfig(cores=args.workers))
        client = cluster.client()

        def run(k):
            job = Job()
            for _ in range(k):
                job.program(["/bin/true"], stdout=None, stderr=None)
            client.wait_for_jobs([client.submit(job)])  # raises if a task failed

        rows.append(("hyperqueue", f"hyperqueue {metadata.version('hyperqueue')}", "true", args.tasks,
                     measure(run, args.tasks, args.rounds)))
    return rows


def falkon_rows(args, tmp):
    """Falkon through its own benchmark (which also runs the C loop), so that nothing differs
    from `falkon bench throughput` but the sizes."""
    rows = []
    out = os.path.join(tmp, "falkon")
    common = [args.falkon, "bench", "throughput", "--executors", str(args.workers), "--rounds", str(args.rounds),
              "--bundles", "100", "--out", out]
    subprocess.run(common + ["--modes", "true", "--impls", "java,c", "--real-slots", "1", "--prefetch", "16",
                             "--real-tasks", str(args.tasks), "--spawners", str(args.workers)],
                   check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "throughput.json")) as f:
        doc = json.load(f)
    for r in doc["rows"]:
        if r["mode"] == "c-spawn-loop":
            rows.append(("c-spawn-loop", "gcc, posix_spawn + waitpid", "true", r["tasks"],
                         r["tasks"] / r["tasksPerSecond"]))
        else:
            rows.append((f"falkon-{r['executor']}", f"{r['executors']} x {r['slots']} slots, prefetch "
                         f"{r['prefetch']}, bundles of {r['bundle']}", "true", r["tasks"], r["seconds"]))
    for slots in (1, 1000):
        subprocess.run(common + ["--modes", "no-exec", "--slots", str(slots), "--tasks", str(args.noop_tasks)],
                       check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(out, "throughput.json")) as f:
            r = json.load(f)["rows"][0]
        rows.append(("falkon-no-exec", f"{r['executors']} x {r['slots']} slots, bundles of {r['bundle']}", "noop",
                     r["tasks"], r["seconds"]))
    return rows


def shell_rows(args, tmp):
    """The same N-line file through the tools a user would pick, wall time including start-up."""
    txt = os.path.join(tmp, "tasks.txt")
    jsonl = os.path.join(tmp, "tasks.jsonl")
    with open(txt, "w") as f:
        f.write("/bin/true\n" * args.tasks)
    with open(jsonl, "w") as f:
        f.write('{"args": ["/bin/true"]}\n' * args.tasks)

    def timed(cmd, stdin=None):
        times = []
        for _ in range(args.rounds):
            with open(stdin) if stdin else open(os.devnull) as inp:
                t0 = time.perf_counter()
                subprocess.run(cmd, stdin=inp, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                times.append(time.perf_counter() - t0)
        return sorted(times)[len(times) // 2]

    w = str(args.workers)
    rows = [("xargs", f"xargs -P {w} -I{{}} sh -c {{}}", "true", args.tasks,
             timed(["xargs", "-P", w, "-I{}", "sh", "-c", "{}"], txt))]
    if shutil.which("parallel"):
        rows.append(("gnu-parallel", f"parallel -j {w}", "true", args.tasks, timed(["parallel", "-j", w], txt)))
    else:
        print("peers: GNU parallel is not installed (Debian: apt-get install parallel): no row for it",
              file=sys.stderr)
    rows.append(("falkon-run", "falkon run FILE, no options (C executor where built)", "true", args.tasks,
                 timed([args.falkon, "run", txt])))
    rows.append(("falkon-run-c", "falkon run --executor c FILE", "true", args.tasks,
                 timed([args.falkon, "run", "--executor", "c", txt])))
    rows.append(("falkon-run-jsonl", "falkon run --executor c FILE.jsonl (args)", "true", args.tasks,
                 timed([args.falkon, "run", "--executor", "c", jsonl])))
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tasks", type=int, default=20000, help="tasks per `true` measurement (default 20000)")
    p.add_argument("--noop-tasks", type=int, default=50000, help="tasks per `noop` measurement (default 50000)")
    p.add_argument("--workers", type=int, default=os.cpu_count(), help="workers per system (default: cores)")
    p.add_argument("--rounds", type=int, default=1, help="rounds per measurement; the median is kept (default 1)")
    p.add_argument("--only", default="falkon,shell,dask,parsl,hq", help="systems to run (default: all)")
    p.add_argument("--falkon", required=True, help="the falkon command")
    p.add_argument("--spawnloop", help="(unused: the C loop is measured by falkon bench throughput)")
    p.add_argument("--out", default="bench-results", help="directory for peers.json and peers.csv")
    p.add_argument("--one", help=argparse.SUPPRESS)  # internal: measure one system, print its rows as JSON
    args = p.parse_args()
    measurers = {"falkon": falkon_rows, "shell": shell_rows, "dask": lambda a, tmp: dask_rows(a),
                 "parsl": parsl_rows, "hq": hq_rows}
    if args.one:
        with tempfile.TemporaryDirectory(prefix=f"falkon-peers-{args.one}-") as tmp:
            print(json.dumps(measurers[args.one](args, tmp)))
        return
    only = args.only.split(",")
    unknown = [n for n in only if n not in measurers]
    if unknown:
        p.error(f"--only: unknown system(s) {', '.join(unknown)} (known: {', '.join(measurers)})")
    rows = []
    for name in measurers:
        if name in only:
            # each system in its own interpreter: nothing one leaves behind (worker pools, threads)
            # can slow the next
            print(f"peers: measuring {name} ...", file=sys.stderr, flush=True)
            out = subprocess.run([sys.executable, __file__, "--one", name] + sys.argv[1:], check=True,
                                 stdout=subprocess.PIPE, text=True).stdout
            rows.extend(tuple(r) for r in json.loads(out.strip().splitlines()[-1]))
    table = []
    limit = {w: max((n / s for sys_, _, wl, n, s in rows if wl == w and sys_ == "c-spawn-loop"), default=0)
             for w in ("true", "noop")}
    best_falkon = {w: max((n / s for sys_, _, wl, n, s in rows if wl == w and sys_.startswith("falkon")), default=0)
                   for w in ("true", "noop")}
    for system, config, workload, n, seconds in rows:
        tps = n / seconds
        table.append({"system": system, "config": config, "workload": workload, "workers": args.workers,
                      "tasks": n, "seconds": seconds, "tasksPerSecond": tps,
                      "pctOfCLoop": 100 * tps / limit[workload] if limit[workload] else 0.0,
                      "falkonBestOverThis": best_falkon[workload] / tps if best_falkon[workload] else 0.0})
    meta = {"cores": os.cpu_count(), "cpu": cpu_model(), "java": java_version(args.falkon),
            "python": platform.python_version(), "os": f"{platform.system()} {platform.release()}",
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(), "rounds": args.rounds,
            "versions": {d: safe_version(d) for d in ("dask", "distributed", "parsl", "hyperqueue")}}
    os.makedirs(args.out, exist_ok=True)
    doc = {"benchmark": "peers", "title": f"peers: /bin/true and no-op tasks through {args.workers} workers each, "
           "beside the C spawn loop", "meta": meta, "rows": table}
    with open(os.path.join(args.out, "peers.json"), "w") as f:
        json.dump(doc, f, indent=2)
    with open(os.path.join(args.out, "peers.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(table[0].keys()))
        w.writeheader()
        w.writerows(table)
    print(f"{'system':<15} {'workload':<8} {'tasks':>7} {'tasks/s':>10} {'% C loop':>9} {'Falkon x':>9}  config")
    for r in table:
        print(f"{r['system']:<15} {r['workload']:<8} {r['tasks']:>7} {r['tasksPerSecond']:>10,.0f} "
              f"{r['pctOfCLoop']:>8.0f}% {r['falkonBestOverThis']:>8.1f}x  {r['config']}")
    print(f"wrote {os.path.join(args.out, 'peers.json')} and peers.csv")


def safe_version(dist):
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def java_version(falkon):
    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()
        return out[0] if out else "unknown"
    except OSError:
        return "unknown"


if __name__ == "__main__":
    main()
