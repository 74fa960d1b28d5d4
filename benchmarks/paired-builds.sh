#!/bin/bash
# Two builds in one sitting, a round of each in turn: benchmarks/defaults.sh (one round: `falkon run`
# on 20,000 tasks against the posix_spawn loop) and `falkon run --no-exec` on 200,000 lines, for
# "nothing got slower" figures (docs/benchmarks.md). Each directory is a built checkout
# (./mvnw -q package -DskipTests; for an older commit: git worktree add DIR COMMIT).
# Usage: benchmarks/paired-builds.sh BEFORE_DIR AFTER_DIR [ROUNDS]
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: benchmarks/paired-builds.sh BEFORE_DIR AFTER_DIR [ROUNDS]" >&2
    exit 2
fi
rounds=${3:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
awk 'BEGIN { for (i = 0; i < 200000; i++) print "/bin/true" }' > "$work/noexec.txt"
printf '%-7s %-6s %8s %8s %8s %12s\n' build round txt% jsonl% shell% no-exec/s
for r in $(seq 1 "$rounds"); do
    for d in "$1" "$2"; do
        ratios=$(bash "$d/benchmarks/defaults.sh" 1 2>/dev/null | tail -1 | awk '{ print $(NF-2), $(NF-1), $NF }')
        ne=$("$d/bin/falkon" run --json --no-exec "$work/noexec.txt" | sed -n 's/.*"tasksPerSecond":\([0-9.]*\).*/\1/p')
        printf '%-7s %-6s %8s %8s %8s %12s\n' "$([ "$d" = "$1" ] && echo before || echo after)" "$r" $ratios "$ne"
    done
done
