#!/bin/bash
# Paired rounds for a change to the C executor, the way docs/benchmarks.md measures one: each round
# runs the C posix_spawn loop (2 spawners) on as many tasks as FILE has lines, then `falkon run FILE`
# with executor binary A, then with B, and prints both rates as a % of that round's loop; then the
# mean of each and in how many rounds B was ahead. Alternating within a round keeps the VM's
# drift out of the comparison.
# Usage: benchmarks/paired.sh A B FILE [ROUNDS] [LOOP-COMMAND...]
#   e.g. benchmarks/paired.sh /tmp/before/falkon-executor-c executor-c/target/build/falkon-executor-c \
#            shell.txt 6 /bin/sh -c /bin/true          (default loop command: /bin/true)
set -euo pipefail
if [ $# -lt 3 ]; then
    sed -n '2,9p' "$0" >&2
    exit 2
fi
a=$(realpath "$1") b=$(realpath "$2") file=$3
for x in "$a" "$b"; do
    [ -f "$x" ] && [ -x "$x" ] || { echo "paired.sh: $x is not an executable file" >&2; exit 2; }
done
rounds=${4:-6}
shift $(( $# < 4 ? $# : 4 ))
[ $# -gt 0 ] || set -- /bin/true
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -std=c11 -pthread -o "$work/spawnloop" "$here/benchmarks/src/main/resources/io/falkon/bench/spawnloop.c"
n=$(wc -l < "$file")
run() { JAVA_TOOL_OPTIONS="-Dfalkon.executor.c=$1" "$here/bin/falkon" run --json "$file" 2>/dev/null \
          | sed -n 's/.*"tasksPerSecond":\([0-9.]*\).*/\1/p'; }
printf '%-6s %10s %10s %10s %8s %8s\n' round loop A B A% B%
for r in $(seq 1 "$rounds"); do
    l=$("$work/spawnloop" "$n" 2 "$@" | sed -n 's/.*tasksPerSecond=\([0-9.]*\).*/\1/p')
    x=$(run "$a")
    y=$(run "$b")
    awk -v r="$r" -v l="$l" -v x="$x" -v y="$y" \
        'BEGIN { printf "%-6s %10.0f %10.0f %10.0f %7.1f%% %7.1f%%\n", r, l, x, y, 100*x/l, 100*y/l }'
done | tee "$work/rows"
awk '{ a += $5; b += $6; if ($6 + 0 > $5 + 0) ahead++ }
     END { printf "mean %42.1f%% %7.1f%%   (B ahead in %d of %d rounds)\n", a/NR, b/NR, ahead, NR }' "$work/rows"
