#!/bin/bash
# GPUs handed to tasks, on a machine with real NVIDIA GPUs (docs/cli.md "GPUs and other resources";
# docs/benchmarks.md "GPUs"). `falkon run` with its defaults (the executor finds the GPUs with
# nvidia-smi) runs 2 tasks per GPU, each asking "gpus": 1. Each task prints what CUDA shows it (the
# driver's own count and device UUIDs, through libcuda: CUDA honours CUDA_VISIBLE_DEVICES, while
# nvidia-smi lists every GPU of the node whatever it says), the `nvidia-smi -L` line of the device its
# CUDA_VISIBLE_DEVICES names, and its start and end times. The check: CUDA shows every task exactly
# one device, the one nvidia-smi names for it; no two tasks on one device overlap; with two GPUs or
# more, tasks on different devices ran at the same time. Prints one line and exits 0 where there is
# no NVIDIA GPU.
# Usage: benchmarks/gpu-check.sh [SECONDS_PER_TASK]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
hold=${1:-3}
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "gpu-check: no NVIDIA GPU here (nvidia-smi -L fails): skipped"
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gpus=$(nvidia-smi -L | grep -c '^GPU ')
echo "== nvidia-smi -L (the machine: $gpus GPU(s))"
nvidia-smi -L
cat > "$work/cuda_view.py" <<'PY'
# What CUDA shows this process: the driver API's device count and each device's UUID.
import ctypes
try:
    cuda = ctypes.CDLL("libcuda.so.1")
except OSError:
    print("cuda: no libcuda")
    raise SystemExit(0)
assert cuda.cuInit(0) == 0, "cuInit failed"
n = ctypes.c_int()
cuda.cuDeviceGetCount(ctypes.byref(n))
uuids = []
for i in range(n.value):
    dev = ctypes.c_int()
    cuda.cuDeviceGet(ctypes.byref(dev), i)
    raw = (ctypes.c_ubyte * 16)()
    cuda.cuDeviceGetUuid(raw, dev)
    h = bytes(raw).hex()
    uuids.append(f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}")
print(f"cuda: {n.value} {' '.join(uuids)}")
PY
for i in $(seq 1 $((2 * gpus))); do
    printf '{"shell": "echo CVD=$CUDA_VISIBLE_DEVICES; python3 %s; nvidia-smi -L -i $CUDA_VISIBLE_DEVICES; echo start=$(date +%%s.%%N); sleep %s; echo end=$(date +%%s.%%N)", "gpus": 1}\n' \
        "$work/cuda_view.py" "$hold"
done > "$work/tasks.jsonl"
"$here/bin/falkon" run --results "$work/results.jsonl" "$work/tasks.jsonl" > /dev/null 2> "$work/run.err" \
    || { cat "$work/run.err"; exit 1; }
python3 - "$work/results.jsonl" <<'PY'
import json, re, sys
runs, bad = [], 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    out = r.get("stdout", "")
    cvd = re.search(r"^CVD=(.*)$", out, re.M).group(1)
    cuda = re.search(r"^cuda: (.*)$", out, re.M).group(1).split()
    smi = re.findall(r"^GPU \d+: .*UUID: (GPU-[^)]+)\)", out, re.M)
    start = float(re.search(r"^start=(\S+)$", out, re.M).group(1))
    end = float(re.search(r"^end=(\S+)$", out, re.M).group(1))
    runs.append((cvd, start, end))
    ok = "," not in cvd and cvd != "" and len(smi) == 1 and (cuda[:1] == ["no"] or cuda == ["1", smi[0]])
    bad += not ok
    print(f"task {r.get('task', '?')}: CUDA_VISIBLE_DEVICES={cvd}, CUDA shows {' '.join(cuda)}, "
          f"nvidia-smi -i names {smi}, ran {start:.2f}-{end:.2f}{'' if ok else '  <- WRONG'}")
pairs = [(a, b) for i, a in enumerate(runs) for b in runs[i + 1:] if a[1] < b[2] and b[1] < a[2]]
clash = sum(a[0] == b[0] for a, b in pairs)
apart = sum(a[0] != b[0] for a, b in pairs)
print(f"tasks not shown exactly their one device: {bad}; pairs on one device at once: {clash}; "
      f"pairs on different devices at once: {apart}")
sys.exit(1 if bad or clash or (len({r[0] for r in runs}) > 1 and not apart) else 0)
PY
