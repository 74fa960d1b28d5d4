#!/usr/bin/env bash
# Snakemake workflows side by side: snakemake --cores 2, --executor falkon (embedded), --executor
# falkon --falkon-provisioner slurm and --executor slurm (Snakemake's official plugin), in paired
# rounds; figures in docs/benchmarks.md ("Snakemake").
#
#   benchmarks/snakemake/run.sh gather   [sidebyside.py options, e.g. --tasks 1000 --ways cores2,falkon]
#   benchmarks/snakemake/run.sh variants [--samples 8 ...]
#
# Needs the README's build, PyPI, and for the variant calling bwa, samtools and bcftools (Debian
# packages). A way with Slurm starts the real Slurm on localhost with accounting, as a site runs it
# (provisioner/src/test/lrm/start-slurm.sh, SLURM_ACCOUNTING=1; root), and stops it at the end.
set -euo pipefail

SNAKEMAKE_VERSION=9.27.1
INTERFACE_VERSION=9.4.0
SLURM_PLUGIN_VERSION=2.8.0
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
workflow=${1:?usage: run.sh gather|variants [options]}
shift
out="$repo/benchmarks/target/snakemake-bench"
venv="$repo/benchmarks/target/snakemake-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check "snakemake==$SNAKEMAKE_VERSION" \
    "snakemake-interface-executor-plugins==$INTERFACE_VERSION" \
    "snakemake-executor-plugin-slurm==$SLURM_PLUGIN_VERSION"
"$venv/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps "$repo/python" \
    "$repo/python/snakemake-executor-plugin-falkon"
export FALKON_BIN="$repo/bin/falkon"

started_slurm=0
if [[ " $* " == *slurm* ]] && ! sacct -n >/dev/null 2>&1; then
    SLURM_ACCOUNTING=1 SLURM_NODES=2 SLURM_NODE_CPUS=2 "$repo/provisioner/src/test/lrm/start-slurm.sh"
    started_slurm=1
fi
trap '[ $started_slurm = 1 ] && "$repo/provisioner/src/test/lrm/stop-slurm.sh" >/dev/null 2>&1 || true' EXIT

extra=()
if [ "$workflow" = variants ]; then
    for tool in bwa samtools bcftools; do
        command -v $tool >/dev/null || { echo "run.sh: $tool is missing (apt-get install bwa samtools bcftools)" >&2; exit 2; }
    done
    data="$out/variants-data"
    [ -f "$data/genome.fa" ] || "$venv/bin/python" "$here/make_data.py" "$data"
    extra=(--data "$data")
fi
"$venv/bin/python" "$here/sidebyside.py" --workflow "$workflow" --python "$venv/bin/python" --out "$out" \
    --results "$repo/bench-results" "${extra[@]}" "$@"
