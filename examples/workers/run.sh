#!/bin/sh
# Counts the lines, words and bytes of FILES small text files (2,000 by default, made with a fixed
# seed) twice through `falkon run`: handed to a persistent worker (one process per slot, no process
# per file) and as one `wc` process per file; checks that both give the same counts.
# Usage: examples/workers/run.sh [DIR]   (default: target/workers)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/target/workers}
worker=$root/executor-c/target/build/falkon-count-worker
[ -x "$worker" ] || { echo "build Falkon first (./mvnw -q install -DskipTests): $worker is missing" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out/corpus"
python3 - "$out" "${FILES:-2000}" "$worker" <<'PY'
import json, random, sys
out, n, worker = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = random.Random(37)
words = ["many", "task", "computing", "falkon", "data", "diffusion", "swift", "executor", "node", "cache"]
with open(f"{out}/count.jsonl", "w") as tasks, open(f"{out}/wc.txt", "w") as plain:
    for i in range(n):
        path = f"corpus/f{i:05d}.txt"
        with open(f"{out}/{path}", "w") as f:
            for _ in range(rng.randint(0, 40)):
                f.write(" ".join(rng.choice(words) for _ in range(rng.randint(0, 12))) + "\n")
        tasks.write(json.dumps({"args": ["count", path], "worker": [worker]}) + "\n")
        plain.write(f"wc {path}\n")
PY
cd "$out"
echo "== $(wc -l < count.jsonl) files through the persistent worker (count.jsonl)"
"$root/bin/falkon" run count.jsonl > counted.out
echo "== the same files, one wc process each (wc.txt)"
"$root/bin/falkon" run wc.txt > wc.out
awk '{print $1, $2, $3, $4}' counted.out | sort > counted.sorted
awk '{print $1, $2, $3, $4}' wc.out | sort > wc.sorted
if cmp -s counted.sorted wc.sorted && [ "$(wc -l < counted.sorted)" -eq "$(wc -l < count.jsonl)" ]; then
    echo "ok: the worker's counts of all $(wc -l < count.jsonl) files equal wc's"
else
    echo "the worker's counts differ from wc's (diff $out/counted.sorted $out/wc.sorted)" >&2
    exit 1
fi
