#!/bin/bash
# Read-only inputs (docs/data-diffusion.md, "Read-only inputs"): what giving a task its inputs costs,
# copied into its sandbox or given in place as read-only bind mounts. TASKS tasks of /bin/true, in
# paired rounds (benchmarks/paired-commands.py), each reading:
#   none   nothing (no sandbox)
#   copy1  one input of SIZE bytes, copied              ro1  the same input, marked readOnly
#   copy3  three inputs of SIZE bytes each, copied      ro3  the same, marked readOnly
# from a store of 20 files of SIZE random bytes, with `falkon run --store` (no other option). The
# paired columns are each way's difference from `none`: the price of a sandbox and its inputs.
# Usage: benchmarks/read-only-inputs.sh [ROUNDS] [TASKS] [SIZE]   (defaults 10, 400, 1000000;
# after ./mvnw -q install -DskipTests; read-only inputs are given in place where the C executor may
# make mount namespaces, as root; elsewhere the ro rows are copies too)
set -euo pipefail
rounds=${1:-10}
tasks=${2:-400}
size=${3:-1000000}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/data"
for i in $(seq 0 19); do head -c "$size" /dev/urandom > "$work/data/f$i"; done
python3 - "$work" "$tasks" <<'EOF'
import json, sys
work, tasks = sys.argv[1], int(sys.argv[2])
for name, count, ro in (("none", 0, False), ("copy1", 1, False), ("ro1", 1, True), ("copy3", 3, False),
                        ("ro3", 3, True)):
    with open(f"{work}/{name}.jsonl", "w") as f:
        for t in range(tasks):
            inputs = [dict({"id": f"data/f{(t + k) % 20}", "name": f"in{k}"}, **({"readOnly": True} if ro else {}))
                      for k in range(count)]
            f.write(json.dumps({"args": ["/bin/true"], **({"inputs": inputs} if inputs else {})}) + "\n")
EOF
cd "$work"
echo "$tasks tasks of /bin/true, inputs of $size bytes"
args=()
for way in none copy1 ro1 copy3 ro3; do
    args+=("$way=$here/bin/falkon run -q --store . $way.jsonl")
done
python3 "$here/benchmarks/paired-commands.py" "$rounds" "${args[@]}"
