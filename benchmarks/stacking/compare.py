#!/usr/bin/env python3
"""AstroPortal stacking (examples/stacking) side by side, in paired rounds (issue 35):

  serial   each image's cut, one after another, then the stack, in one directory
  stages   the cuts through `xargs -P CORES`, then the stack
  falkon   the example's ONE task file, `falkon run --store . workflow.jsonl` (no other option)
  fal-tmp  the same with the cutouts temporary, `falkon run --store . --cache-size 1g`
  inplace  `falkon run` on the commands in one shared directory, ordered by `after`
  swift    the workflow as a SwiftScript program on Swift/K's `local` provider (../shared/swift-k)
  swift-f  the same on Swift/K's `falkon` provider (a dispatcher and one C executor)
  parsl-h  the in-place commands as Parsl bash_apps on HighThroughputExecutor
  parsl-f  the same on falkon.parsl.FalkonExecutor

Every way's stack is checked bit for bit against the serial one. Wall time, the framework's own CPU
(the machine's busy CPU during the way less the serial run's) and the store's bytes, as in
benchmarks/montage/compare.py (see benchmarks/sidebyside.py).

  target/stacking-venv/bin/python benchmarks/stacking/compare.py [--rounds 3] [--grid 6]
(after ./mvnw -q install -DskipTests and examples/stacking/run.sh, which makes the astropy venv)
"""
import argparse
import hashlib
import json
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from sidebyside import (CORES, keep_ways, optional_ways, rounds, run_parsl, run_swift, store_bytes,  # noqa: E402
                        summary, timed, unpack_swift)

STACKING = ROOT / "examples" / "stacking" / "stacking.py"
PY = sys.executable  # the astropy venv's


def serial_script(images, xargs=False):
    cut = f"{PY} bin/stacking.py cut images/$0 positions.txt cutouts/$0"
    lines = ["#!/bin/sh", "set -e", "mkdir -p cutouts results"]
    if xargs:
        lines.append(f"ls images | xargs -P {CORES} -n 1 sh -c '{cut}'")
    else:
        lines += [f"{cut.replace('$0', name)}" for name in images]
    lines.append(f"{PY} bin/stacking.py stack cutouts results/stack.fits")
    return "\n".join(lines) + "\n"


def in_place_tasks(images, run):
    tasks = [{"name": "dirs", "shell": "mkdir -p cutouts results", "dir": str(run), "after": []}]
    for name in images:
        tasks.append({"name": f"cut-{name}", "shell": f"{PY} bin/stacking.py cut images/{name} positions.txt "
                      f"cutouts/{name}", "dir": str(run), "after": ["dirs"]})
    tasks.append({"name": "stack", "shell": f"{PY} bin/stacking.py stack cutouts results/stack.fits",
                  "dir": str(run), "after": [f"cut-{n}" for n in images]})
    return "".join(json.dumps(t) + "\n" for t in tasks)


def swift_script(images):
    files = ", ".join(f'"images/{n}"' for n in images)
    cuts = ", ".join(f'"cutouts/{n}"' for n in images)
    return f"""type file;

app (file c) cut (file img, file pos) {{
    "{PY}" "{STACKING}" "cut" @img @pos @c;
}}
app (file s) stack (file cs[]) {{
    "{PY}" "{STACKING}" "stack" "cutouts" @s;
}}

file pos <"positions.txt">;
file imgs[] <array_mapper; files=[{files}]>;
file cs[] <array_mapper; files=[{cuts}]>;
file result <"results/stack.fits">;

foreach i in [0:{len(images) - 1}] {{
    cs[i] = cut(imgs[i], pos);
}}
result = stack(cs);
"""


def fresh(sky, run):
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir(parents=True)
    shutil.copytree(sky / "images", run / "images")
    shutil.copytree(sky / "bin", run / "bin")
    shutil.copy(sky / "positions.txt", run / "positions.txt")
    return run


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ways", default=None, help="only these ways, comma-separated (serial always runs: the reference)")
    ap.add_argument("--grid", type=int, default=6)
    ap.add_argument("--work", default=None, help="scratch directory (default: target/stacking-bench)")
    a = ap.parse_args()
    work = pathlib.Path(a.work or ROOT / "target" / "stacking-bench").resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    sky = work / "sky"
    subprocess.run([PY, str(STACKING), "generate", str(sky), "--grid", str(a.grid)], check=True,
                   stdout=subprocess.DEVNULL)
    images = sorted(p.name for p in (sky / "images").glob("*.fits"))
    tmp = []
    for line in (sky / "workflow.jsonl").read_text().splitlines():
        t = json.loads(line)
        for o in t["outputs"]:
            if o["id"].startswith("cutouts/"):
                o["temporary"] = True
        tmp.append(json.dumps(t))
    (sky / "workflow-tmp.jsonl").write_text("\n".join(tmp) + "\n")
    (sky / "serial.sh").write_text(serial_script(images))
    (sky / "stages.sh").write_text(serial_script(images, xargs=True))
    (sky / "stacking.swift").write_text(swift_script(images))
    swift = unpack_swift(work)
    falkon = str(ROOT / "bin" / "falkon")
    STORE = {}

    def script(name):
        def way(run):
            return timed(["sh", str(sky / name)], run), run / "results" / "stack.fits"
        return way

    def task_file(name, key, extra=()):
        def way(run):
            shutil.copy(sky / "workflow.jsonl", run / "workflow.jsonl")
            shutil.copy(sky / name, run / "tasks.jsonl")
            r = timed([falkon, "run", "-q", "--json", "--store", ".", *extra, "tasks.jsonl"], run)
            STORE[key] = store_bytes()
            return r, run / "results" / "stack.fits"
        return way

    def in_place(run):
        (run / "inplace.jsonl").write_text(in_place_tasks(images, run))
        return timed([falkon, "run", "-q", "inplace.jsonl"], run), run / "results" / "stack.fits"

    def parsl_way(kind):
        def way(run):
            return run_parsl(kind, in_place_tasks(images, run), run), run / "results" / "stack.fits"
        return way

    def swift_way(provider):
        def way(run):
            return run_swift(swift, sky / "stacking.swift", run, provider), run / "results" / "stack.fits"
        return way

    ways = {"serial": script("serial.sh"), "stages": script("stages.sh"),
            "falkon": task_file("workflow.jsonl", "falkon"),
            "fal-tmp": task_file("workflow-tmp.jsonl", "fal-tmp", ["--cache-size", "1g"]), "inplace": in_place}
    ways = keep_ways(optional_ways(ways, swift, swift_way, parsl_way), a.ways)
    print(f"{len(images)} images, {len(images) + 1} tasks, {CORES} cores")
    rows, cpus, limits = rounds(ways, a.rounds, lambda w, r: fresh(sky, work / f"r{r}" / w),
                                lambda stack: hashlib.sha256(stack.read_bytes()).hexdigest(), "stack")
    summary(ways, rows, cpus, STORE, limits, "stacking")


if __name__ == "__main__":
    main()
