#!/bin/bash
# What `falkon run` gives with no options, against the physical limit, in one sitting (issue 15):
# each round runs the C posix_spawn + waitpid loop with 2 spawners, then `falkon run` on the same
# 20,000 tasks as a .txt file, as .jsonl, and a file of lines that need the shell against the loop
# of `/bin/sh -c`; it prints each round's ratios and the median of each.
# Usage: benchmarks/defaults.sh [ROUNDS] [TASKS]   (after ./mvnw -q install -DskipTests)
set -euo pipefail
rounds=${1:-5}
n=${2:-20000}
here=$(cd "$(dirname "$0")/.." && pwd)
falkon="$here/bin/falkon"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -std=c11 -pthread -o "$work/spawnloop" "$here/benchmarks/src/main/resources/io/falkon/bench/spawnloop.c"
lines() { awk -v n="$n" -v l="$1" 'BEGIN { for (i = 0; i < n; i++) print l }'; }
lines /bin/true > "$work/tasks.txt"
lines '{"args":["/bin/true"]}' > "$work/tasks.jsonl"
lines '/bin/true; true' > "$work/shell.txt"

loop() { "$work/spawnloop" "$n" 2 "$@" | sed -n 's/.*tasksPerSecond=\([0-9.]*\).*/\1/p'; }
run() { "$falkon" run --json "$@" | sed -n 's/.*"tasksPerSecond":\([0-9.]*\).*/\1/p'; }

printf '%-6s %10s %10s %10s %10s %10s %8s %8s %8s\n' round loop txt jsonl sh-loop shell txt% jsonl% shell%
for r in $(seq 1 "$rounds"); do
    l=$(loop /bin/true)
    t=$(run "$work/tasks.txt")
    j=$(run "$work/tasks.jsonl")
    s=$(loop /bin/sh -c /bin/true)
    h=$(run "$work/shell.txt")
    awk -v r="$r" -v l="$l" -v t="$t" -v j="$j" -v s="$s" -v h="$h" 'BEGIN {
        printf "%-6s %10.0f %10.0f %10.0f %10.0f %10.0f %7.1f%% %7.1f%% %7.1f%%\n",
               r, l, t, j, s, h, 100*t/l, 100*j/l, 100*h/s }'
done | tee "$work/rows"
python3 - "$work/rows" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
med = [statistics.median(float(r[k].rstrip("%")) for r in rows) for k in (6, 7, 8)]
print("median" + " " * 57 + "".join(f"{m:8.1f}%" for m in med))
PY
