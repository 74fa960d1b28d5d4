#!/usr/bin/env python3
"""BLAST split and merge (examples/blast) side by side, in paired rounds (issue 35):

  serial   every makeblastdb, blastp and merge one after another in one directory
  stages   each step's tasks through `xargs -P CORES`
  falkon   the example's ONE task file, `falkon run --store . workflow.jsonl` (no other option)
  fal-tmp  the same with the slice databases and the hits temporary, `--cache-size 1g`
  inplace  `falkon run` on the commands in one shared directory, ordered by `after`
  swift    the workflow as a SwiftScript program on Swift/K's `local` provider (../shared/swift-k)
  swift-f  the same on Swift/K's `falkon` provider (a dispatcher and one C executor)
  parsl-h  the in-place commands as Parsl bash_apps on HighThroughputExecutor
  parsl-f  the same on falkon.parsl.FalkonExecutor

Every way's merged results are checked byte for byte against the serial run's. Wall time, the
framework's own CPU and the store's bytes as in benchmarks/sidebyside.py.

  python3 benchmarks/blast/compare.py [--rounds 3] [--proteins 4000] [--slices 4] [--query-files 4]
(after ./mvnw -q install -DskipTests; needs NCBI BLAST+: apt-get install ncbi-blast+)
"""
import argparse
import hashlib
import json
import pathlib
import shutil
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "examples" / "blast"))
import blast  # noqa: E402  (the example's generator and its constants)
from sidebyside import (CORES, keep_ways, optional_ways, rounds, run_parsl, run_swift, store_bytes,  # noqa: E402
                        summary, timed, unpack_swift)

BLAST_PY = ROOT / "examples" / "blast" / "blast.py"


def commands(slices, query_files, residues):
    """The in-place commands: (name, shell, after) in a dependency order."""
    out = [("dirs", "mkdir -p db results " + " ".join(f"hits/q{i}" for i in range(query_files)), [])]
    for k in range(slices):
        out.append((f"mkdb-{k}", f"makeblastdb -in slices/s{k}.fa -dbtype prot -out db/s{k} > /dev/null", ["dirs"]))
    for i in range(query_files):
        for k in range(slices):
            out.append((f"blastp-{i}-{k}", f"blastp -query queries/q{i}.fa -db db/s{k} -dbsize {residues} -evalue "
                        f"{blast.EVALUE} -outfmt '6 {blast.FIELDS}' > hits/q{i}/s{k}.tsv", [f"mkdb-{k}"]))
        out.append((f"merge-{i}", f"python3 bin/blast.py merge hits/q{i} > results/q{i}.tsv",
                    [f"blastp-{i}-{k}" for k in range(slices)]))
    return out


def serial_script(cmds, xargs=False):
    lines = ["#!/bin/sh", "set -e"]
    if not xargs:
        return "\n".join(lines + [c for _, c, _ in cmds]) + "\n"
    # one stage after another, each stage's commands through xargs (one shell each)
    stage = {}
    for name, cmd, after in cmds:
        stage[name] = 1 + max((stage[a] for a in after), default=0)
    for s in sorted(set(stage.values())):
        group = [c for n, c, _ in cmds if stage[n] == s]
        lines.append("cat <<'EOF' | tr '\\n' '\\0' | xargs -0 -P %d -n 1 sh -c" % CORES)
        lines += group
        lines.append("EOF")
    return "\n".join(lines) + "\n"


def in_place_tasks(cmds, run):
    return "".join(json.dumps({"name": n, "shell": c, "dir": str(run), "after": a}) + "\n" for n, c, a in cmds)


MKDB_SH = """#!/bin/sh
# makeblastdb into one archive (Swift maps files, and a database is several)
set -e
makeblastdb -in "$1" -dbtype prot -out dbdir/s > /dev/null
tar cf "$2" dbdir
"""

MERGE_SH = """#!/bin/sh
# the merge of one query file's hits: the directory Swift staged them into
out=$1; shift
python3 "%s" merge "$(dirname "$1")" > "$out"
""" % BLAST_PY

SEARCH_SH = """#!/bin/sh
set -e
tar xf "$2"
blastp -query "$1" -db dbdir/s -dbsize "$3" -evalue "$4" -outfmt "6 $5" > "$6"
"""


def swift_script(slices, query_files, residues, work):
    mkdb, search, merge = work / "mkdb.sh", work / "search.sh", work / "merge.sh"
    hits = ", ".join(f'"hits/q{i}/s{k}.tsv"' for i in range(query_files) for k in range(slices))
    return f"""type file;

app (file db) mkdb (file fa) {{
    sh "{mkdb}" @fa @db;
}}
app (file h) search (file q, file db) {{
    sh "{search}" @q @db "{residues}" "{blast.EVALUE}" "{blast.FIELDS}" @h;
}}
app (file out) merge (file hs[]) {{
    sh "{merge}" @out @filenames(hs);
}}

file slice[] <array_mapper; files=[{", ".join(f'"slices/s{k}.fa"' for k in range(slices))}]>;
file query[] <array_mapper; files=[{", ".join(f'"queries/q{i}.fa"' for i in range(query_files))}]>;
file db[] <array_mapper; files=[{", ".join(f'"db/s{k}.tar"' for k in range(slices))}]>;
file hit[] <array_mapper; files=[{hits}]>;
file result[] <array_mapper; files=[{", ".join(f'"results/q{i}.tsv"' for i in range(query_files))}]>;

foreach k in [0:{slices - 1}] {{
    db[k] = mkdb(slice[k]);
}}
foreach i in [0:{query_files - 1}] {{
    foreach k in [0:{slices - 1}] {{
        hit[i * {slices} + k] = search(query[i], db[k]);
    }}
}}
foreach i in [0:{query_files - 1}] {{
    file hs[];
    foreach k in [0:{slices - 1}] {{
        hs[k] = hit[i * {slices} + k];
    }}
    result[i] = merge(hs);
}}
"""


def fresh(sky, run):
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir(parents=True)
    for d in ("slices", "queries", "bin"):
        shutil.copytree(sky / d, run / d)
    return run


def digest(run, query_files):
    h = hashlib.sha256()
    for i in range(query_files):
        h.update((run / "results" / f"q{i}.tsv").read_bytes())
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ways", default=None, help="only these ways, comma-separated (serial always runs: the reference)")
    ap.add_argument("--proteins", type=int, default=4000)
    ap.add_argument("--slices", type=int, default=4)
    ap.add_argument("--query-files", type=int, default=4)
    ap.add_argument("--work", default=None, help="scratch directory (default: target/blast-bench)")
    a = ap.parse_args()
    if not shutil.which("blastp"):
        sys.exit("compare.py: NCBI BLAST+ is not installed (apt-get install ncbi-blast+)")
    work = pathlib.Path(a.work or ROOT / "target" / "blast-bench").resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    sky = work / "data"
    blast.generate(sky, a.proteins, a.slices, a.query_files, 7)
    residues = sum(len(line.strip()) for line in (sky / "all.fa").read_text().splitlines()
                   if not line.startswith(">"))
    cmds = commands(a.slices, a.query_files, residues)
    tmp = []
    for line in (sky / "workflow.jsonl").read_text().splitlines():
        t = json.loads(line)
        for o in t["outputs"]:
            if not o["id"].startswith("results/"):
                o["temporary"] = True
        tmp.append(json.dumps(t))
    (sky / "workflow-tmp.jsonl").write_text("\n".join(tmp) + "\n")
    (sky / "serial.sh").write_text(serial_script(cmds))
    (sky / "stages.sh").write_text(serial_script(cmds, xargs=True))
    (work / "mkdb.sh").write_text(MKDB_SH)
    (work / "search.sh").write_text(SEARCH_SH)
    (work / "merge.sh").write_text(MERGE_SH)
    (sky / "blast.swift").write_text(swift_script(a.slices, a.query_files, residues, work))
    swift = unpack_swift(work)
    falkon = str(ROOT / "bin" / "falkon")
    STORE = {}

    def script(name):
        def way(run):
            return timed(["sh", str(sky / name)], run), run
        return way

    def task_file(name, key, extra=()):
        def way(run):
            shutil.copy(sky / name, run / "tasks.jsonl")
            r = timed([falkon, "run", "-q", "--json", "--store", ".", *extra, "tasks.jsonl"], run)
            STORE[key] = store_bytes()
            return r, run
        return way

    def in_place(run):
        (run / "inplace.jsonl").write_text(in_place_tasks(cmds, run))
        return timed([falkon, "run", "-q", "inplace.jsonl"], run), run

    def parsl_way(kind):
        return lambda run: (run_parsl(kind, in_place_tasks(cmds, run), run), run)

    def swift_way(provider):
        def way(run):
            for i in range(a.query_files):
                (run / "hits" / f"q{i}").mkdir(parents=True, exist_ok=True)
            return run_swift(swift, sky / "blast.swift", run, provider), run
        return way

    ways = {"serial": script("serial.sh"), "stages": script("stages.sh"),
            "falkon": task_file("workflow.jsonl", "falkon"),
            "fal-tmp": task_file("workflow-tmp.jsonl", "fal-tmp", ["--cache-size", "1g"]), "inplace": in_place}
    ways = keep_ways(optional_ways(ways, swift, swift_way, parsl_way), a.ways)
    print(f"{a.proteins} proteins in {a.slices} slices, {a.query_files} query files: {len(cmds) - 1} tasks, "
          f"{CORES} cores")
    rows, cpus, limits = rounds(ways, a.rounds, lambda w, r: fresh(sky, work / f"r{r}" / w),
                                lambda run: digest(run, a.query_files), "result")
    summary(ways, rows, cpus, STORE, limits, "blast")


if __name__ == "__main__":
    main()
