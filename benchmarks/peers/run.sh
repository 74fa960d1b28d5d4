#!/usr/bin/env bash
# Falkon beside today's peers (Dask distributed, Parsl's HighThroughputExecutor, HyperQueue) and
# the physical limit (a C posix_spawn + waitpid loop), all measured in one run on this machine.
# Not part of CI: it installs the peers from PyPI into a virtualenv (default benchmarks/peers/.venv).
#
#   ./mvnw -q install -DskipTests        # once: Falkon itself, with the C executor
#   benchmarks/peers/run.sh [--tasks N] [--noop-tasks N] [--workers W] [--rounds R] [--only dask,parsl,hq,falkon]
#
# Writes bench-results/peers.json and peers.csv; `bin/falkon bench report` renders them.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${FALKON_PEERS_VENV:-$here/.venv}"
if [ ! -x "$root/bin/falkon" ] || [ ! -d "$root/cli/target/lib" ]; then
    echo "peers: build Falkon first: (cd $root && ./mvnw -q install -DskipTests)" >&2
    exit 2
fi
if [ ! -x "$venv/bin/python" ]; then
    echo "peers: creating the virtualenv $venv" >&2
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt"
cd "$root"
# Parsl starts its interchange and worker pool as commands found on PATH
export PATH="$venv/bin:$PATH"
exec "$venv/bin/python" "$here/peers.py" --falkon "$root/bin/falkon" \
    --spawnloop "$root/benchmarks/src/main/resources/io/falkon/bench/spawnloop.c" "$@"
