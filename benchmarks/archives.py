#!/usr/bin/env python3
"""Output archives (issue 34, seed 003): TASKS tasks each writing a 1 KiB output, saved as files of their
own or appended to the executors' archives, through `falkon run` with no other options.

    benchmarks/archives.py [--tasks 10000] [--rounds 3]

Alternates the two, ROUNDS times, each into a fresh store under $TMPDIR; prints tasks/s (from the run's
own summary), the files the store ends up holding, and checks the archived run: every task's output is
in an archive where its result says, with the SHA-256 the task itself printed, and `tar -t` lists
TASKS entries in all.
"""
import argparse
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]


def task_file(path, n, archive):
    with open(path, "w") as f:
        for i in range(n):
            out = {"path": "o.bin", "id": f"results/{i // 1000}/r-{i}"}
            if archive:
                out["archive"] = True
            f.write(json.dumps({"shell": "head -c 1024 /dev/urandom > o.bin && sha256sum o.bin", "outputs": [out]})
                    + "\n")


def run(store, tasks, results):
    out = subprocess.run([str(ROOT / "bin" / "falkon"), "run", "-q", "--json", "--store", str(store), "--results",
                          str(results), str(tasks)], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"falkon run failed ({out.returncode}): {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def files_under(d):
    return sum(len(fs) for _, _, fs in os.walk(d))


def check(store, results, n):
    seen = 0
    archives = set()
    for line in pathlib.Path(results).read_text().splitlines():
        r = json.loads(line)
        (entry,) = r["archived"]
        with open(store / entry["archive"], "rb") as f:
            f.seek(entry["offset"])
            data = f.read(entry["size"])
        digest = hashlib.sha256(data).hexdigest()
        if digest != entry["sha256"] or digest != r["stdout"].split()[0]:
            sys.exit(f"task {r['task']}: the archived bytes do not match what it wrote")
        archives.add(entry["archive"])
        seen += 1
    listed = 0
    for a in archives:
        t = subprocess.run(["tar", "-tf", str(store / a)], capture_output=True, text=True, check=True)
        listed += len(t.stdout.splitlines())
    if seen != n or listed != n:
        sys.exit(f"{seen} results and {listed} archive entries for {n} tasks")
    return len(archives)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="archives."))
    try:
        for archive in (False, True):
            task_file(work / f"{'archive' if archive else 'files'}.jsonl", a.tasks, archive)
        print(f"# {a.tasks} tasks, each writing a 1 KiB output; falkon run --store DIR (no other options)")
        print(f"{'round':5} {'outputs':8} {'tasks/s':>8} {'files in store':>14} {'archives':>8}")
        rates = {False: [], True: []}
        for rnd in range(1, a.rounds + 1):
            for archive in (False, True):
                name = "archive" if archive else "files"
                store = work / f"store-{name}-{rnd}"
                store.mkdir()
                results = work / f"results-{name}-{rnd}.jsonl"
                summary = run(store, work / f"{name}.jsonl", results)
                archives = check(store, results, a.tasks) if archive else 0
                rates[archive].append(summary["tasksPerSecond"])
                print(f"{rnd:5} {name:8} {summary['tasksPerSecond']:8.1f} {files_under(store):14d} {archives:8d}",
                      flush=True)
                shutil.rmtree(store)
        med = {k: sorted(v)[len(v) // 2] for k, v in rates.items()}
        print(f"# medians: files {med[False]:.1f} tasks/s, archive {med[True]:.1f} tasks/s "
              f"({100 * med[True] / med[False]:.0f}%); every archived output checked")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
