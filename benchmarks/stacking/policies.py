#!/usr/bin/env python3
"""AstroPortal stacking under each dispatch policy, reading the survey from a store with a bandwidth cap
(seed 000 §4.4.6: GCC against first-available when the shared file system is the bottleneck).

    benchmarks/stacking/policies.py [--requests 4] [--rate 262144] [--rounds 1] [--executors 2]

Makes the fixed-seed survey of examples/stacking, REQUESTS stacking requests over it (each image read
REQUESTS times), serves the images from an EMULATED shared store capped at RATE bytes/s for all
executors together (capped_store.py), and runs the requests with `falkon run` under fa, mch, mcu and
gcc in turn (alternating, ROUNDS times). Prints wall time, bytes the store served and cache hits per
policy, and checks that every policy made the same stacks. Run it with the stacking venv's Python
(target/stacking-venv/bin/python, made by examples/stacking/run.sh).
"""
import argparse
import hashlib
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[2]
STACKING = ROOT / "examples" / "stacking" / "stacking.py"
POLICIES = ("fa", "mch", "mcu", "gcc")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def served(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/__stats", timeout=10) as r:
        return json.load(r)["bytes"]


def stacks_digest(survey):
    h = hashlib.sha256()
    for f in sorted((survey / "results").glob("stack-*.fits")):
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=4)
    ap.add_argument("--rate", type=int, default=256 * 1024)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--executors", type=int, default=2)
    ap.add_argument("--cache-size", default="64m")
    a = ap.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="stacking-policies."))
    survey = work / "survey"
    subprocess.run([sys.executable, str(STACKING), "generate", str(survey)], check=True, stdout=subprocess.DEVNULL)
    port = free_port()
    store = subprocess.Popen([sys.executable, str(pathlib.Path(__file__).resolve().parents[1] / "capped_store.py"), str(survey),
                              str(port), str(a.rate)], stdout=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                served(port)
                break
            except OSError:
                time.sleep(0.1)
        subprocess.run([sys.executable, str(STACKING), "requests", str(survey), "--requests", str(a.requests),
                        "--store-url", f"http://127.0.0.1:{port}"], check=True)
        images = sum(f.stat().st_size for f in (survey / "images").glob("*.fits"))
        print(f"# {a.requests} requests x 36 images ({images} bytes), store capped at {a.rate} B/s, "
              f"{a.executors} executors, cache {a.cache_size}; falkon run --policy P")
        print(f"{'policy':8} {'wall s':>8} {'store read B':>13} {'written B':>10} {'local':>6} {'peer':>5} "
              f"{'miss':>5}  stacks")
        digests = set()
        for _ in range(a.rounds):
            for policy in POLICIES:
                for old in ("results", "cutouts"):
                    shutil.rmtree(survey / old, ignore_errors=True)
                before = served(port)
                out = subprocess.run([str(ROOT / "bin" / "falkon"), "run", "-q", "--store", str(survey),
                                      "--executors", str(a.executors), "--cache-size", a.cache_size,
                                      "--policy", policy, "--json", "requests.jsonl"], cwd=survey,
                                     capture_output=True, text=True)
                if out.returncode != 0:
                    sys.exit(f"{policy}: falkon run failed ({out.returncode}): {out.stderr}")
                summary = json.loads(out.stdout.strip().splitlines()[-1])
                d = summary["data"]
                digest = stacks_digest(survey)
                digests.add(digest)
                print(f"{policy:8} {summary['seconds']:8.2f} {served(port) - before:13d} {d['bytesWritten']:10d} "
                      f"{d['localHits']:6d} {d['peerHits']:5d} {d['misses']:5d}  {digest}", flush=True)
        if len(digests) != 1:
            sys.exit(f"the policies made different stacks: {sorted(digests)}")
        print("# every policy made the same stacks")
    finally:
        store.terminate()
        store.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
