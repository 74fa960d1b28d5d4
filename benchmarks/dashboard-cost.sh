#!/usr/bin/env bash
# What watching costs: `falkon run --no-exec --http-port 0` on N lines, in turn with nobody
# watching the dashboard, with only its /events stream open (curl: the dispatcher's side of the
# cost), and with a headless Chromium showing it on this same machine (the browser's rendering
# competes for the cores too), in one session. Prints tasks/s as `falkon run --json` reports
# them; asserts nothing.
#
#   benchmarks/dashboard-cost.sh [N=2000000] [ROUNDS=3]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000000}
rounds=${2:-3}
command -v chromium >/dev/null || { echo "dashboard-cost.sh: needs chromium (apt-get install chromium)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seq "$n" | sed 's/^/task /' > "$work/tasks.txt"

rate() { sed -n 's/.*"tasksPerSecond":\([0-9.]*\).*/\1/p' "$1"; }

run_once() { # 0: nobody, 1: Chromium, 2: an /events stream (curl) -> prints tasks/s
    local out="$work/run.json" err="$work/run.err" browser=""
    bin/falkon run --no-exec --json --http-port 0 "$work/tasks.txt" > "$out" 2> "$err" &
    local pid=$!
    if [ "$1" != 0 ]; then
        local url=""
        while [ -z "$url" ] && kill -0 "$pid" 2>/dev/null; do
            url=$(sed -n 's/^falkon run: dashboard at \(.*\)$/\1/p' "$err")
            [ -n "$url" ] || sleep 0.05 # the address appears on standard error as the run starts
        done
        if [ "$1" = 1 ]; then
            rm -rf "$work/profile"
            chromium --headless=new --no-sandbox --disable-gpu --user-data-dir="$work/profile" \
                --remote-debugging-port=0 "$url" > /dev/null 2>&1 &
        else
            curl -sN -H "Authorization: Bearer ${url##*token=}" "${url%%\?*}events" > /dev/null &
        fi
        browser=$!
    fi
    wait "$pid"
    [ -z "$browser" ] || { kill "$browser" 2>/dev/null; wait "$browser" 2>/dev/null || true; }
    rate "$out"
}

echo "falkon run --no-exec, $n tasks, dashboard on (--http-port 0)"
printf '%-8s %18s %18s %18s\n' round "nobody watching" "/events (curl)" "Chromium watching"
for r in $(seq "$rounds"); do
    printf '%-8s %18s %18s %18s\n' "$r" "$(run_once 0)" "$(run_once 2)" "$(run_once 1)"
done
