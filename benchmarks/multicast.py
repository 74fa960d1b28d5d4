#!/usr/bin/env python3
"""Multicast (issue 34, seed 004 Fig. 9): one object of SIZE bytes read by tasks on N executors.

    benchmarks/multicast.py [--executors 16] [--size-mib 64] [--rate-mib 100] [--uplink-mib 100] [--rounds 1]

Real processes on 127.0.0.1: `falkon dispatcher`, N C executors (`falkon executor --impl c`) of one slot
and a 256 MiB cache each, and a shared store served over HTTP by benchmarks/capped_store.py (an
EMULATION of a shared file system; --rate-mib caps its aggregate bandwidth, 0 = no cap), which counts
what it serves. Loopback has no network links, so each executor's cache server is capped at
--uplink-mib (the C executor's --emulate-uplink, BENCHMARKING ONLY; 0 = no cap), as a node's link
would be.
Three ways to get the object to every executor, each timed from the first dispatch (or, for the
multicast, its start) to the last copy:

  store      first-available: every executor's task reads the store
  one peer   max-compute-util --no-multicast: one executor has it; the N-1 others read it from that peer
  multicast  max-compute-util: every slot busy, 2N tasks queued that read it; the dispatcher sends it
             along a tree (fan-out 2), one read of the store (times from the dispatcher's log)

and two tree models with t_store and t_peer measured alone in the same sitting: seed 004's
T = t_store + ceil(log2 N) * t_peer (each holder sends to one at a time, the holders doubling each
round), and the tree as built here, T2 = t_store + ceil(log3 N) * 2 * t_peer (each holder sends to
two at once over its one link, so each round takes two transfers' time and triples the holders).
"""
import argparse
import datetime
import hashlib
import json
import math
import os
import pathlib
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
FALKON = str(ROOT / "bin" / "falkon")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    def __init__(self, work, store_url, policy, executors, uplink, extra=()):
        self.work, self.procs = work, []
        self.port = free_port()
        self.addr = f"127.0.0.1:{self.port}"
        self.log = work / f"dispatcher-{self.port}.log"
        self.spawn([FALKON, "dispatcher", "--port", str(self.port), "--policy", policy, *extra], self.log)
        self.uplink, self.executors = uplink, 0
        for _ in range(executors):
            self.add_executor()

    def add_executor(self):
        i = self.executors
        self.executors += 1
        cap = ["--emulate-uplink", f"{self.uplink}m"] if self.uplink else []
        self.spawn([FALKON, "executor", "--impl", "c", "--dispatcher", self.addr, "--id", f"x{i}", "--slots",
                    "1", "--cache-size", "256m", "--store", str(self.work / "store"), "--cache-host", "127.0.0.1",
                    *cap], self.work / f"x{i}-{self.port}.log")
        self.await_status(lambda s: s["executors"]["registered"] == self.executors)

    def spawn(self, cmd, log):
        self.procs.append(subprocess.Popen(cmd, stdout=open(log, "w"), stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL))

    def status(self):
        out = subprocess.run([FALKON, "status", "--json", "--dispatcher", self.addr], capture_output=True, text=True)
        return json.loads(out.stdout) if out.returncode == 0 else None

    def await_status(self, ok, what="the dispatcher"):
        for _ in range(600):
            s = self.status()
            if s and ok(s):
                return s
            time.sleep(0.1)
        sys.exit(f"multicast: {what} never got there")

    def submit(self, tasks, results=None, detach=False):
        f = self.work / f"tasks-{secrets.token_hex(4)}.jsonl"
        f.write_text("".join(json.dumps(t) + "\n" for t in tasks))
        cmd = [FALKON, "submit", "-q", "--dispatcher", self.addr]
        cmd += ["--detach"] if detach else []
        cmd += ["--results", str(results)] if results else []
        subprocess.run(cmd + [str(f)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def close(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


def results(path):
    return [json.loads(line) for line in pathlib.Path(path).read_text().splitlines()]


def spread(rs):
    """Seconds from the first dispatch to the last start: every executor has its copy by then."""
    return (max(r["startedMicros"] for r in rs) - min(r["dispatchedMicros"] for r in rs)) / 1e6


def log_time(line):
    return datetime.datetime.fromisoformat(line.split()[0].replace("Z", "+00:00")).timestamp()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--executors", type=int, default=16)
    ap.add_argument("--size-mib", type=int, default=64)
    ap.add_argument("--rate-mib", type=int, default=100)
    ap.add_argument("--uplink-mib", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=1)
    a = ap.parse_args()
    n = a.executors
    work = pathlib.Path(tempfile.mkdtemp(prefix="multicast."))
    os.environ["FALKON_TOKEN"] = secrets.token_hex(16)
    (work / "store").mkdir()
    size = a.size_mib << 20
    blob = os.urandom(size)
    (work / "store" / "db").write_bytes(blob)
    digest = hashlib.sha256(blob).hexdigest()
    del blob
    sport = free_port()
    store = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "capped_store.py"), str(work / "store"),
                              str(sport), str(a.rate_mib << 20)], stdout=subprocess.DEVNULL)

    def served():
        with urllib.request.urlopen(f"http://127.0.0.1:{sport}/__stats", timeout=10) as r:
            return json.load(r)["bytes"]

    for _ in range(100):
        try:
            served()
            break
        except OSError:
            time.sleep(0.1)

    def reader(tag, k):
        return {"args": ["/bin/true", str(k)], "inputs": [{"id": f"db-{tag}", "source": f"http://127.0.0.1:{sport}/db",
                                                            "size": size, "checksum": "sha256:" + digest}]}

    def hold(release):
        return {"shell": f"while [ ! -e {release} ]; do sleep 0.02; done"}

    print(f"# one object of {a.size_mib} MiB to {n} C executors (links {a.uplink_mib or 'not capped'} MiB/s), store "
          f"{'capped at %d MiB/s' % a.rate_mib if a.rate_mib else 'not capped'}; seconds until every executor "
          f"has it; store reads of it")
    print(f"{'round':5} {'store s':>8} {'reads':>5} {'one peer s':>10} {'reads':>5} {'multicast s':>11} {'reads':>5} "
          f"{'t_store':>8} {'t_peer':>7} {'model s':>8} {'model2 s':>8}")
    try:
        for rnd in range(1, a.rounds + 1):
            row = {}
            # alone: one store read, one peer transfer (the model's t_store and t_peer)
            c = Cluster(work, sport, "max-compute-util", 1, a.uplink_mib, ["--no-multicast"])
            try:
                r1, r2 = work / f"t1-{rnd}.jsonl", work / f"t2-{rnd}.jsonl"
                c.submit([reader(f"alone{rnd}", 0)], r1)
                rel = work / f"rel-alone-{rnd}"
                c.submit([hold(rel)], detach=True)  # the holder busy before the second executor comes
                c.await_status(lambda s: s["executors"]["busySlots"] == 1)
                c.add_executor()
                c.submit([reader(f"alone{rnd}", 1)], r2)
                rel.touch()
                t_store, t_peer = spread(results(r1)), spread(results(r2))
            finally:
                c.close()
            for mode, policy, extra in (("store", "first-available", []),
                                        ("peer", "max-compute-util", ["--no-multicast"]),
                                        ("multicast", "max-compute-util", [])):
                tag = f"{mode}{rnd}"
                before = served()
                c = Cluster(work, sport, policy, n, a.uplink_mib, extra)
                try:
                    res = work / f"{tag}.jsonl"
                    if mode == "store":
                        c.submit([reader(tag, k) for k in range(n)], res)
                        row[mode] = spread(results(res))
                    elif mode == "peer":
                        first = work / f"{tag}-first.jsonl"
                        c.submit([reader(tag, 0)], first)
                        rel = work / f"rel-{tag}"
                        c.submit([hold(rel)], detach=True)  # the holder busy: the others read from it
                        c.await_status(lambda s: s["executors"]["busySlots"] == 1)
                        c.submit([reader(tag, k) for k in range(1, n)], res)
                        rel.touch()
                        row[mode] = spread(results(res))
                    else:
                        rel = work / f"rel-{tag}"
                        c.submit([hold(rel) for _ in range(n)], detach=True)
                        c.await_status(lambda s: s["executors"]["busySlots"] == n)
                        c.submit([reader(tag, k) for k in range(2 * n)], detach=True)
                        done = c.await_status(lambda s: sum(1 for e in s["executorList"]
                                                            if e["cachedObjects"] >= 1) == n, "the multicast")
                        rel.touch()
                        lines = c.log.read_text().splitlines()
                        start = [log_time(x) for x in lines if re.search(r"multicasting db-" + tag + r"\b", x)]
                        end = [log_time(x) for x in lines if re.search(r"multicast of db-" + tag + r" done", x)]
                        row[mode] = end[0] - start[0] if start and end else float("nan")
                        c.await_status(lambda s: s["completed"] == 3 * n, "the readers")
                        del done
                finally:
                    c.close()
                row[mode + "_reads"] = (served() - before) / size
            model = t_store + math.ceil(math.log2(n)) * t_peer
            model2 = t_store + math.ceil(math.log(n) / math.log(3) - 1e-9) * 2 * t_peer
            print(f"{rnd:5} {row['store']:8.2f} {row['store_reads']:5.1f} {row['peer']:10.2f} {row['peer_reads']:5.1f} "
                  f"{row['multicast']:11.2f} {row['multicast_reads']:5.1f} {t_store:8.2f} {t_peer:7.2f} {model:8.2f} "
                  f"{model2:8.2f}",
                  flush=True)
    finally:
        store.terminate()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
