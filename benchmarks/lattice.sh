#!/bin/bash
# Issue 33's scale check, end to end: a .jsonl file of WIDTH x DEPTH tasks, each task of layer d
# after two tasks of layer d-1, checked and run by `falkon run --no-exec` with no other option, in
# ROUNDS rounds; each round also runs the same tasks with their names and no "after" (independent),
# so the two rows are paired. Prints each run's start-up (JVM, services, reading and checking the
# whole file), its run time and tasks/s as `falkon run --json` reports them, and its peak RSS.
# Usage: benchmarks/lattice.sh [WIDTH] [DEPTH] [ROUNDS]   (after ./mvnw -q install -DskipTests)
set -euo pipefail
width=${1:-1000}
depth=${2:-1000}
rounds=${3:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
awk -v w="$width" -v d="$depth" 'BEGIN {
    for (l = 0; l < d; l++) for (i = 0; i < w; i++) {
        if (l == 0) printf "{\"name\":\"%d.%d\",\"args\":[\"/bin/true\"]}\n", l, i
        else printf "{\"name\":\"%d.%d\",\"after\":[\"%d.%d\",\"%d.%d\"],\"args\":[\"/bin/true\"]}\n",
                    l, i, l - 1, i, l - 1, (i + 1) % w
    } }' > "$work/lattice.jsonl"
sed 's/,"after":\[[^]]*\]//' "$work/lattice.jsonl" > "$work/independent.jsonl"

# peak RSS from GNU time when it is installed (Debian: package "time"), else "-"
measure() {
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f '%M' -o "$work/rss" "$here/bin/falkon" run --no-exec --json "$1" 2>/dev/null
        rss=$(( $(tail -1 "$work/rss") / 1024 ))
    else
        "$here/bin/falkon" run --no-exec --json "$1" 2>/dev/null
        rss=-
    fi > "$work/out"
    python3 - "$work/out" "$2" "$rss" <<'PY'
import json, sys
s = json.loads(open(sys.argv[1]).read().splitlines()[-1])
assert s["succeeded"] == s["tasks"], s
print(f'{sys.argv[2]:<12} {s["tasks"]:>9} {s["startupSeconds"]:>9.2f} {s["seconds"]:>8.2f} '
      f'{s["tasksPerSecond"]:>10.0f} {sys.argv[3]:>8}')
PY
}
printf '%-12s %9s %9s %8s %10s %8s\n' form tasks startup-s run-s tasks/s rss-MiB
for r in $(seq 1 "$rounds"); do
    measure "$work/independent.jsonl" independent
    measure "$work/lattice.jsonl" lattice
done
