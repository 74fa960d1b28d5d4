#!/bin/sh
# AstroPortal stacking as one Falkon workflow, from nothing to a checked result:
#   examples/stacking/run.sh [DIR]      (default: target/stacking)
#   examples/stacking/run.sh --venv     only make the virtualenv (.ci/run does it while Maven builds)
# Needs Python 3 and the Falkon build (./mvnw -q install -DskipTests). It makes a virtualenv with
# astropy and numpy from PyPI (target/stacking-venv, once), generates a survey of overlapping FITS
# images with faint sources injected below single-image detection, writes ONE task file (a cutout
# task per image, one gather that sums each position's cutouts), runs it with falkon run, repeats the
# crops and sums serially for a reference, and checks that the stack equals it and that the sources
# stand out about sqrt(N) times more clearly than in one image while blank positions do not.
# Exit 3: astropy could not be installed (no PyPI).
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dir=${1:-$root/target/stacking}
venv=${FALKON_STACKING_VENV:-$root/target/stacking-venv}
ready() { "$venv/bin/python" -c 'import astropy, numpy' 2>/dev/null; }
if ! ready; then
    # one maker at a time: a second run.sh waits for the first's virtualenv rather than remaking it
    mkdir -p "$(dirname "$venv")"
    exec 9> "$venv.lock"
    flock 9
    if ! ready; then
        python3 -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check \
            "astropy==8.0.2" "numpy==2.4.6" || { echo "run.sh: cannot install astropy and numpy from PyPI" >&2; exit 3; }
    fi
    exec 9>&-
fi
[ "$dir" = --venv ] && exit 0
py="$venv/bin/python"
rm -rf "$dir"
"$py" "$here/stacking.py" generate "$dir"
cd "$dir"
"$root/bin/falkon" run -q --store . --results results.jsonl workflow.jsonl
"$py" "$here/stacking.py" serial .
"$py" "$here/stacking.py" check .
