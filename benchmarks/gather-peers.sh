#!/bin/bash
# Collective gather from peers (issue 34, seed 004): INPUTS objects of SIZE bytes end up in the
# caches of two executors (each reads its share once from the store), then one task on a third
# executor reads them all as a directory. The dispatcher's hints send it to the two peers; today's
# build asks them once per object, a build with the batch request once per peer. Prints, per build
# and round, the task's staging time (dispatched to started, from its result), where its inputs came
# from, and how many requests it made to peers (objects fetched one by one, plus batch requests,
# from the gathering executor's debug log). Real processes on 127.0.0.1: `falkon dispatcher`
# (max-compute-util), three `falkon executor --impl c` with 64 MiB caches, `falkon submit`.
# Usage: benchmarks/gather-peers.sh [BUILD_DIR...]   (default: this checkout)
# Environment: INPUTS (1000), SIZE bytes (4096), ROUNDS (3), IMPL (c), FLAT (1: the inputs named part-N in
# the sandbox itself rather than in parts/, for builds older than directory inputs)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
builds=("$@")
[ ${#builds[@]} -gt 0 ] || builds=("$here")
inputs=${INPUTS:-1000}
size=${SIZE:-4096}
rounds=${ROUNDS:-3}
impl=${IMPL:-c}
work=$(mktemp -d)
pids=()
stop_all() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    pids=()
}
trap 'stop_all; rm -rf "$work"' EXIT
export FALKON_TOKEN
FALKON_TOKEN=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
mkdir -p "$work/store/gp"
python3 - "$work/store/gp" "$inputs" "$size" <<'PY'
import os, sys, random
d, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    with open(os.path.join(d, "part-%d" % i), "wb") as f:
        f.write(random.Random(i).randbytes(size))
PY

# the two task files of a round: every part read once (by whichever of the two peers is free), and
# the gather of all of them into parts/, each with its checksum
taskfiles() {
    python3 - "$work/store" "$1" "$work/load.jsonl" "$work/gather.jsonl" "${FLAT:-0}" <<'PY'
import hashlib, json, os, sys
store, tag, load, gather, flat = sys.argv[1:6]
names = sorted(os.listdir(os.path.join(store, "gp")), key=lambda n: int(n.split("-")[1]))
parts = []
with open(load, "w") as f:
    for n in names:
        path = os.path.join(store, "gp", n)
        with open(path, "rb") as g:
            digest = hashlib.sha256(g.read()).hexdigest()
        ref = {"id": "gp/%s/%s" % (tag, n), "source": "gp/" + n, "size": os.path.getsize(path),
               "checksum": "sha256:" + digest}
        f.write(json.dumps({"args": ["/bin/true"], "inputs": [ref]}) + "\n")
        parts.append(dict(ref, name=n if flat == "1" else "parts/"))
with open(gather, "w") as f:
    shell = "echo $FALKON_INPUTS | tr : '\\n' | xargs cat | wc -c" if flat == "1" else "cat parts/* | wc -c"
    f.write(json.dumps({"shell": shell, "inputs": parts}) + "\n")
PY
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

data() { # BUILD PORT: the dispatcher's data counters so far (peer hits, misses, local hits)
    "$1/bin/falkon" status --dispatcher "127.0.0.1:$2" --json \
        | python3 -c 'import json,sys; d=json.load(sys.stdin)["data"]; print(d["peerHits"], d["misses"], d["localHits"])'
}

registered() { # BUILD PORT: executors registered
    "$1/bin/falkon" status --dispatcher "127.0.0.1:$2" --json 2>/dev/null \
        | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["executors"]["registered"], d["executors"]["busySlots"])' \
        2>/dev/null || echo "0 0"
}

await() { # BUILD PORT "REGISTERED BUSY"
    for _ in $(seq 1 600); do
        [ "$(registered "$1" "$2")" = "$3" ] && return 0
        sleep 0.1
    done
    echo "gather-peers: the dispatcher never reached '$3' (registered busy)" >&2
    exit 1
}

executor() { # BUILD PORT ID (at debug level: the gathering executor logs each batch request)
    if [ "$impl" = c ]; then
        "$1/bin/falkon" executor --impl c --dispatcher "127.0.0.1:$2" --id "$3" --slots 1 --cache-size 64m \
            --store "$work/store" --cache-host 127.0.0.1 --log-level debug > "$work/$3.log" 2>&1 &
    else
        FALKON_JAVA_OPTS="-XX:+UseParallelGC -Dfalkon.log.level=DEBUG" "$1/bin/falkon" executor --impl java \
            --dispatcher "127.0.0.1:$2" --id "$3" --slots 1 --cache-size 64m --store "$work/store" \
            --cache-host 127.0.0.1 > "$work/$3.log" 2>&1 &
    fi
    pids+=($!)
}

echo "gather from peers: $inputs inputs x $size bytes held by two peer caches, read by one task on a third executor ($impl)"
printf '%-40s %-6s %10s %9s %9s %8s %13s\n' build round staging_s peerHits storeMiss local peer_requests
for r in $(seq 1 "$rounds"); do
    for b in "${builds[@]}"; do
        tag="r$r-$RANDOM"
        taskfiles "$tag"
        port=$(free_port)
        "$b/bin/falkon" dispatcher --port "$port" --policy max-compute-util > "$work/dispatcher.log" 2>&1 &
        pids+=($!)
        executor "$b" "$port" peer-a
        executor "$b" "$port" peer-b
        await "$b" "$port" "2 0"
        "$b/bin/falkon" submit -q --dispatcher "127.0.0.1:$port" "$work/load.jsonl" > /dev/null 2>> "$work/submit.log"
        # both peers busy until the gather is done, so that it runs on the third executor
        rm -f "$work/release"
        printf '{"shell": "while [ ! -e %s ]; do sleep 0.05; done"}\n' "$work/release" > "$work/hold.jsonl"
        printf '{"shell": "while [ ! -e %s ]; do sleep 0.05; done"}\n' "$work/release" >> "$work/hold.jsonl"
        "$b/bin/falkon" submit --detach --dispatcher "127.0.0.1:$port" "$work/hold.jsonl" > /dev/null
        await "$b" "$port" "2 2"
        executor "$b" "$port" gatherer
        await "$b" "$port" "3 2"
        read -r peer0 miss0 local0 < <(data "$b" "$port")
        "$b/bin/falkon" submit --dispatcher "127.0.0.1:$port" --results "$work/results.jsonl" "$work/gather.jsonl" \
            > "$work/out.txt" 2>> "$work/submit.log"
        touch "$work/release"
        [ "$(tr -d ' \n' < "$work/out.txt")" = "$((inputs * size))" ] || {
            echo "wrong output: $(cat "$work/out.txt")" >&2
            exit 1
        }
        staging=$(python3 -c '
import json, sys
r = json.loads(open(sys.argv[1]).readline())
print("%.3f" % ((r["startedMicros"] - r["dispatchedMicros"]) / 1e6))' "$work/results.jsonl")
        # the gather's own counts: the dispatcher's totals after it less those before (a build that
        # predates the counters in the results file has them there too)
        read -r peer1 miss1 local1 < <(data "$b" "$port")
        peer=$((peer1 - peer0)) miss=$((miss1 - miss0)) local=$((local1 - local0))
        # one request per object fetched alone, one per batch
        batches=$(grep -c "in one request" "$work/gatherer.log" || true)
        batched=$({ grep -o "gathered [0-9]* of" "$work/gatherer.log" || true; } | awk '{ n += $2 } END { print n + 0 }')
        printf '%-40s %-6s %10s %9s %9s %8s %13s\n' "$b" "$r" "$staging" "$peer" "$miss" "$local" \
            "$((peer - batched + batches))"
        stop_all
    done
done
