#!/usr/bin/env bash
# Today's SC07 Table 2 on this machine: the same short tasks (each `touch OUT/I`) run by the real
# batch schedulers on localhost and by Falkon on nodes from them, nodes included. For each way:
# wall time from the first submission to the last task done, tasks/s, and the time to the first
# task done (the earliest output's modification time, nanoseconds).
#
#   benchmarks/table2.sh [--tasks N] [--lrm-tasks N] [--ways sbatch,array,srun,qsub,qarray,falkon-slurm,falkon-sge]
#
# --tasks (default 1000) is what Falkon and srun run; --lrm-tasks (default: --tasks) what the
# one-job-per-task ways run (sbatch, array, qsub, qarray: about 1.5 tasks/s, so 1,000 take 11 min
# each). Starts Slurm (2 nodes x 2 CPUs) and SGE (4 slots) on localhost through
# provisioner/src/test/lrm (root) and stops them at the end. Prints a Markdown table; appends JSON
# lines to benchmarks/target/table2.jsonl.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
lrm="$repo/provisioner/src/test/lrm"
tasks=1000
lrm_tasks=
ways=sbatch,array,srun,qsub,qarray,falkon-slurm,falkon-sge
while [ $# -gt 0 ]; do
    case "$1" in
        --tasks) tasks=$2; shift ;;
        --lrm-tasks) lrm_tasks=$2; shift ;;
        --ways) ways=$2; shift ;;
        -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "table2.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
lrm_tasks=${lrm_tasks:-$tasks}
out="$repo/benchmarks/target/table2"
record="$repo/benchmarks/target/table2.jsonl"
mkdir -p "$out"
now() { date +%s.%N; }

started=()
cleanup() {
    for s in "${started[@]}"; do "$lrm/stop-$s.sh" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT
need() { # slurm|sge: start it unless it answers
    case "$1" in
        slurm) sinfo -h >/dev/null 2>&1 && return 0
               SLURM_NODES=2 SLURM_NODE_CPUS=2 "$lrm/start-slurm.sh" >/dev/null ;;
        sge)   qstat >/dev/null 2>&1 && return 0
               SGE_SLOTS=4 "$lrm/start-sge.sh" >/dev/null ;;
    esac
    started+=("$1")
}

await_files() { # DIR N: until N files exist
    while [ "$(find "$1" -type f | wc -l)" -lt "$2" ]; do sleep 0.2; done
}

report() { # WAY N T0 T1 DIR
    local first
    first=$(find "$5" -type f -printf '%T@\n' | sort -n | head -1)
    python3 - "$1" "$2" "$3" "$4" "$first" "$record" <<'EOF'
import json, sys
way, n, t0, t1, first, record = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
row = {"way": way, "tasks": n, "wall_s": round(t1 - t0, 3), "tasks_per_s": round(n / (t1 - t0), 2),
       "first_s": round(first - t0, 3)}
open(record, "a").write(json.dumps(row) + "\n")
# the latest row per way, as falkon bench report reads it (bench-results/table2.json)
import os
rows = {}
for line in open(record):
    r = json.loads(line)
    rows[r["way"]] = {"way": r["way"], "tasks": r["tasks"], "wallSeconds": r["wall_s"],
                      "tasksPerSecond": r["tasks_per_s"], "firstSeconds": r["first_s"]}
results = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(record))), "bench-results")
os.makedirs(results, exist_ok=True)
json.dump({"benchmark": "table2", "title": "table2: the same short tasks by Slurm and SGE (a job per task, arrays, "
           "job steps) and by falkon run on their nodes", "meta": {}, "rows": list(rows.values())},
          open(os.path.join(results, "table2.json"), "w"), indent=2)
print(f"| {way} | {n} | {row['wall_s']:.1f} | {row['tasks_per_s']:.2f} | {row['first_s']:.2f} |", flush=True)
EOF
}

echo "| way | tasks | wall (s) | tasks/s | first done (s) |"
echo "|---|---:|---:|---:|---:|"
IFS=, read -r -a list <<< "$ways"
for way in "${list[@]}"; do
    d="$out/$way"
    rm -rf "$d"
    mkdir -p "$d/out" "$d/logs"
    case "$way" in
        sbatch)
            need slurm
            t0=$(now)
            for i in $(seq "$lrm_tasks"); do
                sbatch -Q -o /dev/null -e /dev/null --wrap "touch $d/out/$i" >/dev/null
            done
            await_files "$d/out" "$lrm_tasks"; t1=$(now)
            report "one sbatch per task" "$lrm_tasks" "$t0" "$t1" "$d/out" ;;
        array)
            need slurm
            t0=$(now)
            sbatch -Q -o /dev/null -e /dev/null --array "1-$lrm_tasks" --wrap "touch $d/out/\$SLURM_ARRAY_TASK_ID" >/dev/null
            await_files "$d/out" "$lrm_tasks"; t1=$(now)
            report "one Slurm job array" "$lrm_tasks" "$t0" "$t1" "$d/out" ;;
        srun)
            need slurm
            # one allocation of both nodes; a job step per task, 4 at a time (the allocation's CPUs)
            t0=$(now)
            # (a step refused while the others hold every CPU is retried by srun; the allocation's exit
            # status counts such a refusal, so the files are what says every task ran)
            sbatch -Q --wait -N 2 -n 4 -o "$d/logs/alloc.log" --wrap \
                "seq $tasks | xargs -P 4 -I{} srun -Q -N 1 -n 1 --exact touch $d/out/{}" >/dev/null || true
            await_files "$d/out" "$tasks"; t1=$(now)
            report "srun steps in one allocation" "$tasks" "$t0" "$t1" "$d/out" ;;
        qsub)
            need sge
            t0=$(now)
            for i in $(seq "$lrm_tasks"); do
                qsub -b y -o /dev/null -e /dev/null touch "$d/out/$i" >/dev/null
            done
            await_files "$d/out" "$lrm_tasks"; t1=$(now)
            report "one SGE qsub per task" "$lrm_tasks" "$t0" "$t1" "$d/out" ;;
        qarray)
            need sge
            t0=$(now)
            # a script, not -b y: a binary job's words are joined into one line, which breaks sh -c
            printf '#!/bin/sh\ntouch %s/out/$SGE_TASK_ID\n' "$d" > "$d/task.sh"
            qsub -S /bin/sh -o /dev/null -e /dev/null -t "1-$lrm_tasks" "$d/task.sh" >/dev/null
            await_files "$d/out" "$lrm_tasks"; t1=$(now)
            report "one SGE array job" "$lrm_tasks" "$t0" "$t1" "$d/out" ;;
        falkon-slurm|falkon-sge)
            lrm_name=${way#falkon-}
            need "$lrm_name"
            seq "$tasks" | sed "s|^|touch $d/out/|" > "$d/tasks.txt"
            t0=$(now)
            "$repo/bin/falkon" run -q --provisioner "$lrm_name" --max-nodes 2 --slots 2 "$d/tasks.txt" > "$d/logs/run.log" 2>&1
            t1=$(now)
            report "falkon run --provisioner $lrm_name (nodes included)" "$tasks" "$t0" "$t1" "$d/out" ;;
        *) echo "table2.sh: unknown way $way" >&2; exit 2 ;;
    esac
done
