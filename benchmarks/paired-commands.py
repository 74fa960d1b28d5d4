#!/usr/bin/env python3
"""Paired timing of short commands: runs each command in turn, ROUNDS times (the order reversed
every other round, so that neither always goes first), and prints per command the median and
minimum wall time, the median CPU time (user + system, of the command and the children it waited
for), and the median of its paired differences from the first command. On a shared two-core host
the sittings differ by tens of milliseconds; the paired median finds differences of a few
(docs/benchmarks.md, "Start-up of a short command").

Usage: benchmarks/paired-commands.py ROUNDS LABEL=COMMAND [LABEL=COMMAND ...]
  e.g. benchmarks/paired-commands.py 30 "before=/tmp/wt-base/bin/falkon run -q examples/hello.txt" \\
                                        "after=bin/falkon run -q examples/hello.txt"
"""
import os
import statistics
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 3 or not sys.argv[1].isdigit() or any("=" not in a for a in sys.argv[2:]):
        sys.exit(__doc__.split("\n\n")[1])
    rounds = int(sys.argv[1])
    commands = [a.split("=", 1) for a in sys.argv[2:]]
    wall = {label: [] for label, _ in commands}
    cpu = {label: [] for label, _ in commands}
    for r in range(rounds):
        for label, command in (commands if r % 2 == 0 else commands[::-1]):
            t0 = time.monotonic()
            p = subprocess.Popen(command, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, status, usage = os.wait4(p.pid, 0)
            wall[label].append((time.monotonic() - t0) * 1000)
            cpu[label].append((usage.ru_utime + usage.ru_stime) * 1000)
            if status != 0:
                sys.exit(f"paired-commands: {label} failed (wait status {status}): {command}")
    first = commands[0][0]
    print(f"{rounds} rounds; milliseconds; paired: the median of (this - {first}) over the rounds")
    print(f"{'command':12s} {'wall':>7s} {'min':>7s} {'cpu':>7s} {'paired wall':>12s} {'paired cpu':>11s}")
    for label, _ in commands:
        dw = statistics.median(x - y for x, y in zip(wall[label], wall[first]))
        dc = statistics.median(x - y for x, y in zip(cpu[label], cpu[first]))
        print(f"{label:12s} {statistics.median(wall[label]):7.1f} {min(wall[label]):7.1f} "
              f"{statistics.median(cpu[label]):7.1f} {dw:+12.1f} {dc:+11.1f}")


if __name__ == "__main__":
    main()
