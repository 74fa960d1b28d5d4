#!/bin/bash
# A gather task: one task reads INPUTS objects from an HTTP store whose every request takes
# LATENCY_MS before its first byte (an emulated per-object latency, as a busy shared file system's
# metadata server or a WAN store has; the store itself is python3's threading HTTP server on
# 127.0.0.1). `falkon run` on a one-line .jsonl task file, defaults otherwise; wall time of the run
# and of the task's staging (dispatched to started, from the result). Builds given are run in turn,
# each round, for paired figures (docs/benchmarks.md); each round uses fresh object ids, so every
# input is a cache miss fetched from the store.
# Usage: benchmarks/gather.sh [BUILD_DIR...]   (default: this checkout)
# Environment: INPUTS (64), SIZE bytes (262144), LATENCY_MS (20), ROUNDS (3), FALKON_RUN_OPTS (none)
set -euo pipefail
FALKON_RUN_OPTS=${FALKON_RUN_OPTS:-}
here=$(cd "$(dirname "$0")/.." && pwd)
builds=("$@")
[ ${#builds[@]} -gt 0 ] || builds=("$here")
inputs=${INPUTS:-64}
size=${SIZE:-262144}
latency=${LATENCY_MS:-20}
rounds=${ROUNDS:-3}
work=$(mktemp -d)
server_pid=
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/objects"
python3 - "$work/objects" "$inputs" "$size" <<'PY'
import os, sys, random
d, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    with open(os.path.join(d, "part-%d" % i), "wb") as f:
        f.write(random.Random(i).randbytes(size))
PY
python3 - "$work/objects" "$latency" "$work/port" <<'PY' &
import functools, http.server, sys, time
root, latency, port_file = sys.argv[1], int(sys.argv[2]) / 1000.0, sys.argv[3]
class Slow(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        time.sleep(latency)
        super().do_GET()
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Slow, directory=root))
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os; os.rename(port_file + ".tmp", port_file)
server.serve_forever()
PY
server_pid=$!
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port")
# one task file per round and build: fresh ids, the same objects
taskfile() {
    python3 - "$work/objects" "$port" "$1" > "$2" <<'PY'
import hashlib, json, os, sys
d, port, tag = sys.argv[1], sys.argv[2], sys.argv[3]
names = sorted(os.listdir(d), key=lambda n: int(n.split("-")[1]))
inputs = []
for n in names:
    with open(os.path.join(d, n), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    inputs.append({"id": "gather/%s/%s" % (tag, n), "source": "http://127.0.0.1:%s/%s" % (port, n),
                   "size": os.path.getsize(os.path.join(d, n)), "checksum": "sha256:" + digest, "name": n})
print(json.dumps({"shell": "cat part-* | wc -c", "inputs": inputs}))
PY
}
echo "gather: $inputs inputs x $size bytes, store latency ${latency} ms per object (emulated)"
printf '%-40s %-6s %9s %11s\n' build round wall_s staging_s
for r in $(seq 1 "$rounds"); do
    for b in "${builds[@]}"; do
        tag="r$r-$$-$(basename "$b")-$RANDOM"
        taskfile "$tag" "$work/gather.jsonl"
        start=$(date +%s.%N)
        "$b/bin/falkon" run $FALKON_RUN_OPTS --results "$work/results.jsonl" "$work/gather.jsonl" > "$work/out.txt" 2> "$work/err.txt"
        end=$(date +%s.%N)
        [ "$(tr -d ' \n' < "$work/out.txt")" = "$((inputs * size))" ] || { echo "wrong output: $(cat "$work/out.txt")" >&2; exit 1; }
        staging=$(python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); print("%.3f" % ((r["startedMicros"]-r["dispatchedMicros"])/1e6))' "$work/results.jsonl" 2>/dev/null || echo "?")
        printf '%-40s %-6s %9.3f %11s\n' "$b" "$r" "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" "$staging"
    done
done
