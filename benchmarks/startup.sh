#!/bin/bash
# Issue 40: how long a short command takes from exec to exit. Each round runs `falkon run` on a
# 1-line, a 6-line (examples/hello.txt) and a 100-line file, GNU parallel (-j 2) and xargs -P 2 on
# the same files right after it, `falkon status` against a running dispatcher, and the start of a
# `falkon dispatcher` (to its "listening on" line); then the median, min and max of each over the rounds.
# Usage: benchmarks/startup.sh [ROUNDS]     (after ./mvnw -q install -DskipTests)
#   JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 benchmarks/startup.sh    measures another JDK
#   (build with the same JAVA_HOME: the class data archive is made for the JDK that builds)
#   STARTUP_ROWS=FILE benchmarks/startup.sh 3      also appends each measurement to FILE ("name ms"),
#   for sittings that alternate two builds (docs/benchmarks.md, "Start-up of a short command")
set -euo pipefail
rounds=${1:-11}
here=$(cd "$(dirname "$0")/.." && pwd)
falkon="$here/bin/falkon"
if ! command -v parallel >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
        "$here/provisioner/src/test/lrm/apt-install.sh" parallel
    else
        echo "startup.sh: GNU parallel is not installed (Debian: apt-get install parallel)" >&2
        exit 2
    fi
fi
work=$(mktemp -d)
dispatcher=""
cleanup() { [ -n "$dispatcher" ] && kill "$dispatcher" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
echo true > "$work/one.txt"
cp "$here/examples/hello.txt" "$work/hello.txt"
for i in $(seq 1 100); do echo true; done > "$work/hundred.txt"

# a dispatcher for `falkon status` (its token in ~/.falkon/token, as a user's would be)
"$falkon" dispatcher --host 127.0.0.1 --port 0 > "$work/dispatcher.log" 2>&1 &
dispatcher=$!
for _ in $(seq 1 200); do
    port=$(sed -n 's/.*listening on [^:]*:\([0-9]*\).*/\1/p' "$work/dispatcher.log" | head -1)
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { echo "startup.sh: the dispatcher did not start: $(cat "$work/dispatcher.log")" >&2; exit 1; }

# wall seconds of one command, its output thrown away (a failure stops the script)
wall() {
    local t0 t1
    t0=$(date +%s%N)
    "$@" > /dev/null 2>&1 || { echo "startup.sh: failed: $*" >&2; exit 1; }
    t1=$(date +%s%N)
    echo "$(( (t1 - t0) / 1000000 ))"
}
# milliseconds from the exec of `falkon dispatcher` to its "listening on" line (then it is stopped)
listening() {
    local t0 t1 log pid
    log="$work/listening.log"
    : > "$log"
    t0=$(date +%s%N)
    HOME="$work/home" "$falkon" dispatcher --host 127.0.0.1 --port 0 > "$log" 2>&1 &
    pid=$!
    until grep -q "listening on" "$log"; do
        kill -0 "$pid" 2>/dev/null || { echo "startup.sh: the dispatcher did not start: $(cat "$log")" >&2; exit 1; }
        sleep 0.002
    done
    t1=$(date +%s%N)
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    echo "$(( (t1 - t0) / 1000000 ))"
}
mkdir -p "$work/home"
for r in $(seq 1 "$rounds"); do
    for f in one hello hundred; do
        echo "falkon-run-$f $(wall "$falkon" run -q "$work/$f.txt")"
        echo "parallel-$f $(wall sh -c "parallel --will-cite -j 2 < '$work/$f.txt'")"
        echo "xargs-$f $(wall sh -c "xargs -P 2 -d '\n' -n 1 sh -c < '$work/$f.txt'")"
    done
    echo "falkon-status $(wall "$falkon" status --dispatcher "127.0.0.1:$port")"
    echo "falkon-dispatcher-listening $(listening)"
done > "$work/rows"
[ -n "${STARTUP_ROWS:-}" ] && cat "$work/rows" >> "$STARTUP_ROWS"
python3 - "$work/rows" "$rounds" <<'PY'
import collections, statistics, sys
ms = collections.defaultdict(list)
for line in open(sys.argv[1]):
    name, v = line.split()
    ms[name].append(int(v))
print(f"{sys.argv[2]} rounds, wall milliseconds from exec to exit")
print(f"{'command':<28} {'median':>7} {'min':>6} {'max':>6}")
for name, v in ms.items():
    print(f"{name:<28} {statistics.median(v):>7.0f} {min(v):>6} {max(v):>6}")
PY
