"""What the side-by-side benchmarks of the applications share (issue 35: Montage, stacking): running a
way and measuring it, and the ways that are the same for every application given its tasks in place
(one shared directory, dependencies by name): Parsl's two executors and Swift/K's two providers.

A way's CPU is what the whole machine spent busy while it ran (/proc/stat): some ways' processes are
never waited for by anyone (Parsl's HTEX workers), so the children's rusage would miss them. Run the
benchmarks on an otherwise idle machine.
"""
import json
import os
import pathlib
import socket
import subprocess
import sys
import tarfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
FALKON = str(ROOT / "bin" / "falkon")
CORES = os.cpu_count() or 1
SWIFT_TGZ = ROOT.parent / "shared" / "swift-k" / "swift-k-dist.tgz"
SWIFT_PROVIDER = ROOT / "swift-provider" / "target" / "falkon-swift-provider.jar"
PARSL_VENV = pathlib.Path(os.environ.get("FALKON_PARSL_VENV", ROOT / "python" / "target" / "venv"))

LAST = [""]  # the last timed command's output (falkon run --json's summary)


def busy():
    """CPU seconds the whole machine has spent busy (user, nice, system, interrupts)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:8]]
    return (v[0] + v[1] + v[2] + v[5] + v[6]) / os.sysconf("SC_CLK_TCK")


def timed(cmd, cwd, env=None):
    """Runs cmd; returns (wall seconds, CPU seconds the machine spent meanwhile); exits on failure."""
    before = busy()
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.monotonic() - t0
    cpu = busy() - before
    if p.returncode != 0:
        sys.exit(f"{cmd} failed in {cwd}:\n{p.stdout[-2000:]}")
    LAST[0] = p.stdout
    return wall, cpu


def store_bytes():
    """The store's read and written bytes from the summary line of the last falkon run --json."""
    d = json.loads(LAST[0].strip().splitlines()[-1])["data"]
    return d["bytesStore"], d["bytesWritten"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# tasks in place as Parsl bash_apps: argv = KIND TASKS.jsonl (each task: name, shell, dir, after)
PARSL_PROGRAM = """
import json, os, sys
import parsl
from parsl.app.app import bash_app
from parsl.config import Config
kind, tasks = sys.argv[1], [json.loads(l) for l in open(sys.argv[2])]
cores = os.cpu_count() or 1
if kind == "htex":
    from parsl.executors import HighThroughputExecutor
    from parsl.providers import LocalProvider
    ex = HighThroughputExecutor(label="htex", max_workers_per_node=cores,
                                provider=LocalProvider(init_blocks=1, min_blocks=1, max_blocks=1))
else:
    from falkon.parsl import FalkonExecutor
    ex = FalkonExecutor(label="falkon")
parsl.load(Config(executors=[ex], run_dir=os.path.join(os.getcwd(), "runinfo")))

@bash_app
def task(cmd, inputs=()):
    return cmd

futures = {}
for t in tasks:
    futures[t["name"]] = task("cd '%s' && %s" % (t["dir"], t["shell"]), inputs=[futures[a] for a in t["after"]])
for f in futures.values():
    f.result()
parsl.dfk().cleanup()
"""


def parsl_available():
    if (PARSL_VENV / "bin" / "python").exists():
        return True
    print(f"parsl: not measured (no virtualenv at {PARSL_VENV}: python/run-parsl-tests.sh makes it)",
          file=sys.stderr)
    return False


def run_parsl(kind, tasks_jsonl, run):
    """The in-place tasks (a .jsonl text) through Parsl with HTEX ("htex") or FalkonExecutor ("falkon")."""
    (run / "inplace.jsonl").write_text(tasks_jsonl)
    (run / "program.py").write_text(PARSL_PROGRAM)
    env = dict(os.environ, PATH=f"{PARSL_VENV / 'bin'}:{os.environ['PATH']}", FALKON_BIN=FALKON)
    return timed(["timeout", "900", str(PARSL_VENV / "bin" / "python"), "program.py", kind, "inplace.jsonl"], run,
                 env)


def unpack_swift(work):
    """Swift/K unpacked under work, or None (with a line saying why) when ../shared/swift-k is absent."""
    if not SWIFT_TGZ.exists():
        print(f"swift: not measured ({SWIFT_TGZ} is absent)", file=sys.stderr)
        return None
    with tarfile.open(SWIFT_TGZ) as t:
        t.extractall(work / "swift-k")
    return work / "swift-k" / "swift-svn" / "bin" / "swift"


def swift_conf(work, execution='execution { type: "local" }'):
    return f"""site.local {{
    {execution}
    filesystem {{ type: "local" }}
    workDirectory: "{work}"
    maxParallelTasks: {CORES}
    initialParallelTasks: {CORES}
    app.ALL {{ executable: "*" }}
}}
sites: [local]
lazyErrors: false
executionRetries: 0
"""


def run_swift(swift, script, run, provider="local"):
    """A SwiftScript program with Swift/K's local provider, or its falkon provider on a `falkon
    dispatcher` and one C executor of CORES slots started for it (their CPU counted with the way's)."""
    env = dict(os.environ, SWIFT_USAGE_STATS="0")
    cmd = ["timeout", "900", str(swift), "-config", "swift.conf", str(script)]
    if provider == "local":
        (run / "swift.conf").write_text(swift_conf(run / "swiftwork"))
        return timed(cmd, run, env)
    port = free_port()
    env.update(FALKON_TOKEN=os.urandom(16).hex(), CLASSPATH=str(SWIFT_PROVIDER))
    (run / "swift.conf").write_text(swift_conf(run / "swiftwork",
                                               f'execution {{ type: "falkon", URL: "falkon://127.0.0.1:{port}" }}'))
    before = busy()
    t0 = time.monotonic()
    log = open(run / "cluster.log", "w")
    procs = [subprocess.Popen([FALKON, "dispatcher", "--host", "127.0.0.1", "--port", str(port)], env=env,
                              stdout=log, stderr=subprocess.STDOUT)]
    procs.append(subprocess.Popen([FALKON, "executor", "--impl", "c", "--dispatcher", f"127.0.0.1:{port}", "--slots",
                                   str(CORES)], env=env, stdout=log, stderr=subprocess.STDOUT))
    try:
        p = subprocess.run(cmd, cwd=run, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            sys.exit(f"Swift/K with the falkon provider failed:\n{p.stdout[-2000:]}")
    finally:
        for q in procs:
            q.terminate()
        for q in procs:
            q.wait()
    return time.monotonic() - t0, busy() - before


def swift_falkon_available():
    if SWIFT_PROVIDER.exists():
        return True
    print(f"swift-f: not measured ({SWIFT_PROVIDER} is absent: build first)", file=sys.stderr)
    return False


def optional_ways(ways, swift, swift_way, parsl_way):
    """Adds the Swift/K and Parsl ways to ways where their engines are here (a line says why not)."""
    if swift:
        ways["swift"] = swift_way("local")
        if swift_falkon_available():
            ways["swift-f"] = swift_way("falkon")
    if parsl_available():
        ways["parsl-h"] = parsl_way("htex")
        ways["parsl-f"] = parsl_way("falkon")
    return ways


def keep_ways(ways, names):
    """Only the ways named (comma-separated; None keeps all); the serial way stays, as every other's
    reference. An unknown name is an error naming the known ones."""
    if names is None:
        return ways
    wanted = {n.strip() for n in names.split(",") if n.strip()} | {"serial"}
    unknown = wanted - set(ways)
    if unknown:
        sys.exit(f"--ways: no way {', '.join(sorted(unknown))} here (known: {', '.join(ways)})")
    return {w: run for w, run in ways.items() if w in wanted}


def rounds(ways, n, fresh, digest, what):
    """Runs every way n times, each round in an order rotated from the last, each from fresh(way,
    round) (a new directory); way(run) returns ((wall, cpu), target) and digest(target) what must
    equal the serial way's. Prints each round; returns the walls and CPUs per way and the rounds'
    CPU-bound limits (the serial run's CPU over the cores)."""
    rows = {w: [] for w in ways}
    cpus = {w: [] for w in ways}
    limits = []
    print(f"{'round':<6} {'way':<8} {'wall s':>8} {'x limit':>8}")
    order = list(ways)
    for r in range(n):
        results = {}
        for w in order:
            run = fresh(w, r)
            # the way before left dirty pages behind; written back during this way's run they would
            # slow it (above all one that forces its outputs to disk), so every way starts clean
            os.sync()
            (wall, cpu), target = ways[w](run)
            results[w] = (wall, cpu, digest(target))
            subprocess.run(["rm", "-rf", str(run)])  # a way's stragglers may still be tidying up
        ref = results["serial"]
        limit = ref[1] / CORES
        limits.append(limit)
        for w in ways:
            wall, cpu, d = results[w]
            if d != ref[2]:
                sys.exit(f"round {r + 1}: the {w} {what} differs from the serial one")
            rows[w].append(wall)
            cpus[w].append(cpu)
            print(f"{r + 1:<6} {w:<8} {wall:>8.2f} {wall / limit:>8.2f}")
        print(f"{r + 1:<6} {'limit':<8} {limit:>8.2f}   (serial CPU {ref[1]:.2f} s / {CORES} cores)")
        order = order[1:] + order[:1]
    print(f"\nmedian over {n} rounds; every {what} identical to the serial one")
    return rows, cpus, limits


def summary(ways, rows, cpus, store, limits, application, ref="serial"):
    """The medians: wall, × the CPU-bound limit, × serial, the framework's own CPU, the store's bytes;
    printed, and kept for the report in bench-results/applications.json (this application's rows
    replaced, the others' kept)."""
    import statistics
    lim = statistics.median(limits)
    ser = statistics.median(rows[ref])
    ser_cpu = statistics.median(cpus[ref])
    xargs = statistics.median(rows["stages"])
    out = []
    print(f"{'way':<8} {'wall s':>8} {'x limit':>8} {'x serial':>9} {'framework CPU s':>15} {'store read MB':>13} "
          f"{'written MB':>10}")
    for w in ways:
        m = statistics.median(rows[w])
        own = statistics.median(cpus[w]) - ser_cpu
        read, written = store.get(w, store.get("falkon", (0, 0)))
        print(f"{w:<8} {m:>8.2f} {m / lim:>8.2f} {m / ser:>9.2f} {own:>15.2f} {read / 1e6:>13.1f} "
              f"{written / 1e6:>10.1f}")
        out.append({"application": application, "way": w, "wallSeconds": round(m, 3),
                    "overXargs": round(m / xargs, 3), "frameworkCpuSeconds": round(own, 2),
                    "storeReadMB": round(read / 1e6, 1), "storeWrittenMB": round(written / 1e6, 1),
                    "rounds": len(rows[w])})
    print(f"{'limit':<8} {lim:>8.2f} {1:>8.2f} {lim / ser:>9.2f}")
    keep(application, out)


def keep(application, rows, path=ROOT / "bench-results" / "applications.json"):
    """Puts an application's rows into the report's result file (benchmarks/report reads it)."""
    import datetime
    import platform
    doc = {"benchmark": "applications", "rows": []}
    if path.exists():
        doc = json.loads(path.read_text())
    doc["title"] = ("applications side by side: wall time, framework CPU and store bytes per way, "
                    "medians of paired rounds")
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor())
    doc["meta"] = {"cores": CORES, "cpu": cpu, "os": f"{platform.system()} {platform.release()}",
                   "python": platform.python_version(),
                   "date": datetime.datetime.now(datetime.timezone.utc).isoformat()}
    doc["rows"] = [r for r in doc["rows"] if r["application"] != application] + rows
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"(kept in {path})")
