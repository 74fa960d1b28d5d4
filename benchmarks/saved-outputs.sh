#!/bin/bash
# Tasks whose outputs take the disk a while to save: each sleeps 20 ms, then writes MB megabytes to
# its one declared output, which the executor forces to disk and renames into the store before the
# task is reported (docs/data-diffusion.md). `falkon run` with no other option than --store; the wall
# time of each round and their median. Measures the C executor's saving off the slot
# (docs/executor-c.md); to compare two builds, give each build's falkon in turn, a round each.
# Usage: benchmarks/saved-outputs.sh [TASKS] [MB] [ROUNDS] [FALKON...]    (defaults: 200 2 5 bin/falkon)
set -euo pipefail
tasks=${1:-200}
mb=${2:-2}
rounds=${3:-5}
shift $(($# < 3 ? $# : 3))
here=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- "$here/bin/falkon"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bytes=$((mb * 1000000))
for i in $(seq 0 $((tasks - 1))); do
    printf '{"shell": "sleep 0.02; head -c %d /dev/urandom > out.bin", "outputs": [{"path": "out.bin", "id": "o/%d.bin"}]}\n' \
        "$bytes" "$i"
done > "$work/tasks.jsonl"
echo "$tasks tasks, each writing one $mb MB output; wall ms per round"
for falkon in "$@"; do : > "$work/walls.$(echo "$falkon" | md5sum | cut -c1-8)"; done
for r in $(seq 1 "$rounds"); do
    for falkon in "$@"; do
        run="$work/run"
        rm -rf "$run" && mkdir "$run"
        sync
        start=$(date +%s%N)
        (cd "$run" && "$falkon" run -q --store . "$work/tasks.jsonl" > /dev/null 2> "$work/err") || { cat "$work/err" >&2; exit 1; }
        ms=$((($(date +%s%N) - start) / 1000000))
        saved=$(find "$run/o" -type f | wc -l)
        [ "$saved" = "$tasks" ] || { echo "saved-outputs.sh: $saved of $tasks outputs saved by $falkon" >&2; exit 1; }
        echo "$ms" >> "$work/walls.$(echo "$falkon" | md5sum | cut -c1-8)"
        printf 'round %-3s %7s  %s\n' "$r" "$ms" "$falkon"
    done
done
for falkon in "$@"; do
    median=$(sort -n "$work/walls.$(echo "$falkon" | md5sum | cut -c1-8)" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    printf 'median    %7s  %s\n' "$median" "$falkon"
done
