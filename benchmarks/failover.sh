#!/bin/bash
# Failover (docs/scaling.md "Failover"): three dispatchers on this machine, each with one C executor
# of two slots, run a random workflow of TASKS tasks that pass values to each other through files
# (each reads up to two earlier tasks' values, sleeps 0.05 s, writes its own), submitted with
# `falkon submit --dispatcher a,b,c` and default options. LOSS_AFTER seconds after the submission
# the second dispatcher is lost:
#   kill     SIGKILL
#   stop     SIGSTOP (a hang: its connections stay open)
#   restart  SIGKILL, then restarted from its journal RESTART_AFTER seconds after the kill
# Prints the run's wall time, how many tasks ran twice (a run is a line in runs/tN) and checks every
# output against the value the graph gives.
# Usage: benchmarks/failover.sh [kill|stop|restart|none]
# Environment: TASKS (400), LOSS_AFTER (3), RESTART_AFTER (5), SUBMIT_OPTS (none, e.g. --failover-after 0)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
loss=${1:-kill}
tasks=${TASKS:-400}
loss_after=${LOSS_AFTER:-3}
restart_after=${RESTART_AFTER:-5}
SUBMIT_OPTS=${SUBMIT_OPTS:-}
work=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
export FALKON_HOME="$work/home" TMPDIR="$work/tmp"
mkdir -p "$FALKON_HOME" "$TMPDIR" "$work/out" "$work/runs"
ports=()
for i in 0 1 2; do
    ports+=("$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')")
done

dpids=()
dispatcher() { # INDEX LOGNAME; not in a subshell: the cleanup must know every pid
    local i=$1 extra=()
    [ "$i" = 1 ] && extra=(--journal "$work/journal")
    "$here/bin/falkon" dispatcher --host 127.0.0.1 --port "${ports[$i]}" "${extra[@]}" >"$work/$2.log" 2>&1 &
    pids+=($!)
    dpids[$i]=$!
    for _ in $(seq 600); do
        grep -q "falkon dispatcher listening on" "$work/$2.log" 2>/dev/null && return
        sleep 0.1
    done
    echo "dispatcher $i did not start: $(cat "$work/$2.log")" >&2
    exit 1
}
for i in 0 1 2; do
    dispatcher "$i" "d$i"
    mkdir -p "$work/w$i"
    "$here/bin/falkon" executor --dispatcher "127.0.0.1:${ports[$i]}" --id "f$i" --impl c --slots 2 \
        --reconnect-for 120 --workdir "$work/w$i" >"$work/e$i.log" 2>&1 &
    pids+=($!)
done
python3 - "$work" "$tasks" <<'PY'
import json, random, sys
work, n = sys.argv[1], int(sys.argv[2])
r = random.Random(59)
values = []
with open(f"{work}/tasks.jsonl", "w") as f:
    for i in range(n):
        deps = sorted({max(0, i - 1 - r.randrange(min(i, 40))) for _ in range(0 if i == 0 else r.randrange(3))})
        values.append((i + sum(values[d] for d in deps)) % 1000003)
        s = " + ".join([str(i)] + [f"$(cat {work}/out/t{d})" for d in deps])
        f.write(json.dumps({"name": f"t{i}", "after": [f"t{d}" for d in deps],
                            "shell": f"sleep 0.05; v=$(( ({s}) % 1000003 )); echo $v > {work}/out/t{i}; "
                                     f"pwd >> {work}/runs/t{i}"}) + "\n")
with open(f"{work}/values", "w") as f:
    f.write("\n".join(map(str, values)))
PY
addresses="127.0.0.1:${ports[0]},127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}"
# every executor registered before the clock starts
for _ in $(seq 600); do
    n=$("$here/bin/falkon" status --dispatcher "$addresses" --json 2>/dev/null \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)["executors"]["slots"])' 2>/dev/null || echo 0)
    [ "$n" = 6 ] && break
    sleep 0.2
done
start=$(date +%s.%N)
# shellcheck disable=SC2086
"$here/bin/falkon" submit --dispatcher "$addresses" $SUBMIT_OPTS "$work/tasks.jsonl" >"$work/submit.log" 2>&1 &
submit=$!
if [ "$loss" != none ]; then
    sleep "$loss_after"
    case $loss in
        kill|restart) kill -KILL "${dpids[1]}" ;;
        stop) kill -STOP "${dpids[1]}" ;;
    esac
    lost=$(date +%s.%N)
    if [ "$loss" = restart ]; then
        sleep "$restart_after"
        dispatcher 1 d1-restarted
    fi
fi
rc=0
wait "$submit" || rc=$?
end=$(date +%s.%N)
python3 - "$work" "$tasks" "$start" "$end" "${lost:-}" "$loss" "$rc" <<'PY'
import os, sys
work, n, start, end, lost, loss, rc = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), \
    sys.argv[5], sys.argv[6], int(sys.argv[7])
values = open(f"{work}/values").read().split("\n")
wrong = [i for i in range(n) if not os.path.exists(f"{work}/out/t{i}")
         or open(f"{work}/out/t{i}").read().strip() != values[i]]
twice = sum(1 for i in range(n) if os.path.exists(f"{work}/runs/t{i}")
            and len(open(f"{work}/runs/t{i}").read().splitlines()) > 1)
after = f", {end - float(lost):.2f} s after the loss" if lost else ""
print(f"failover {loss}: {n} tasks in {end - start:.2f} s{after}; submit exit {rc}; {len(wrong)} wrong outputs; "
      f"{twice} ran twice")
sys.exit(1 if wrong or rc else 0)
PY
