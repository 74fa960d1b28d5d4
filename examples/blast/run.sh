#!/bin/sh
# BLAST split over database slices and merged, as one Falkon workflow, from nothing to a checked result:
#   examples/blast/run.sh [DIR]      (default: target/blast)
# Needs NCBI BLAST+ (Debian: apt-get install ncbi-blast+) and the Falkon build (./mvnw -q install -DskipTests).
# It generates a seeded protein database with planted homologues, writes ONE task file (makeblastdb per
# slice, blastp per query file and slice, a merge per query file), runs it with falkon run, searches the
# whole database serially for a reference, and checks that the merged best hits equal it and that every
# planted homologue is found.
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dir=${1:-$root/target/blast}
rm -rf "$dir"
python3 "$here/blast.py" generate "$dir"
cd "$dir"
"$root/bin/falkon" run -q --store . --results results.jsonl workflow.jsonl
python3 "$here/blast.py" serial .
python3 "$here/blast.py" check .
