#!/bin/sh
# The Montage mosaic of M13 as one Falkon workflow, from nothing to a checked mosaic:
#   examples/montage/run.sh [DIR] [TILES]      (default: target/montage, 3 x 3 tiles)
# Needs Montage (Debian: apt-get install montage) and the Falkon build (./mvnw -q install -DskipTests).
# It fetches m13.fits (from the astropy wheel on PyPI), cuts the sky into tiles with planted background
# offsets, writes ONE task file for the whole mosaic, runs it with falkon run, runs the same commands
# serially for a reference, and checks that the two mosaics are identical and that the fitted background
# corrections recover the planted offsets.
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dir=${1:-$root/target/montage}
tiles=${2:-3}
rm -rf "$dir"
python3 "$here/montage.py" generate "$dir" --tiles "$tiles" --m13 "$(python3 "$here/montage.py" fetch "$root/target/montage-cache")"
cd "$dir"
"$root/bin/falkon" run -q --store . --results results.jsonl workflow.jsonl
python3 "$here/montage.py" serial .
python3 "$here/montage.py" check .
