#!/bin/bash
# Persistent workers against a process per task: `falkon run` on TASKS no-op tasks, once as
# `/bin/true` processes and once handed to the example C worker (examples/workers/count_worker.c,
# verb `true`), with each executor implementation; ROUNDS alternating rounds, the median of each.
# The rate is the run's own (first task submitted to last result), start-up excluded.
# Usage: benchmarks/workers.sh        Environment: TASKS (50000), ROUNDS (3), IMPLS (c,java)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
tasks=${TASKS:-50000}
rounds=${ROUNDS:-3}
impls=${IMPLS:-c,java}
worker="$here/executor-c/target/build/falkon-count-worker"
[ -x "$worker" ] || { echo "build first (./mvnw install -DskipTests): $worker is missing" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" "$tasks" "$worker" <<'PY'
import json, sys
work, n, worker = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(f"{work}/process.jsonl", "w") as f:
    f.writelines(json.dumps({"args": ["/bin/true"]}) + "\n" for _ in range(n))
with open(f"{work}/worker.jsonl", "w") as f:
    f.writelines(json.dumps({"args": ["true"], "worker": [worker]}) + "\n" for _ in range(n))
PY
rate() { # the tasks/s figure of a run's summary line
    "$here/bin/falkon" run --executor "$1" "$work/$2.jsonl" 2>&1 >/dev/null | sed -n 's/.*(\([0-9.]*\) tasks\/s.*/\1/p'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "$tasks no-op tasks through \`falkon run\`, median of $rounds alternating rounds (tasks/s)"
printf '%-8s %14s %14s %8s\n' executor process worker ratio
for impl in ${impls//,/ }; do
    : > "$work/p" && : > "$work/w"
    for _ in $(seq "$rounds"); do
        rate "$impl" process >> "$work/p"
        rate "$impl" worker >> "$work/w"
    done
    p=$(median < "$work/p") && w=$(median < "$work/w")
    printf '%-8s %14.0f %14.0f %7.1fx\n' "$impl" "$p" "$w" "$(echo "$w / $p" | bc -l)"
done
