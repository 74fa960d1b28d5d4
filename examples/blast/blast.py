#!/usr/bin/env python3
"""BLAST split over database slices and merged, as one Falkon task file (seed 004 section III-B).

A seeded generator writes a protein database with planted homologues: random proteins, among them
families (every 100th protein and two relatives of it, with 30% and 45% of its residues mutated,
which land in other slices), and query proteins made by mutating a fifth of the residues of each
family's founder. The database is split into
slices; the workflow runs makeblastdb per slice, blastp per query file and slice, and one merge per
query file. Every blastp is told the whole database's size (-dbsize), so its e-values are those of a
search of the whole database, and the merged best hits equal such a search, which `serial` runs and
`check` compares.

    blast.py generate DIR [--proteins N] [--slices K] [--query-files Q] [--seed S]
    blast.py serial DIR        # the whole database searched at once, for reference
    blast.py check DIR         # merged = reference, and every planted source found
    blast.py merge HITS_DIR    # (the merge task) the best hits of a query file's slices, on stdout

Needs NCBI BLAST+ (Debian: ncbi-blast+) and Python 3 (standard library only).
"""
import argparse
import json
import os
import pathlib
import random
import shutil
import subprocess
import sys

AMINO = "ACDEFGHIKLMNPQRSTVWY"
EVALUE = "1e-5"
LENGTH = 300
FIELDS = "qseqid sseqid pident length mismatch gapopen qstart qend sstart send evalue bitscore"
TOP = 5  # best hits kept per query


def die(msg):
    print(f"blast.py: {msg}", file=sys.stderr)
    sys.exit(1)


def fasta(records):
    return "".join(f">{name}\n" + "".join(seq[i:i + 60] + "\n" for i in range(0, len(seq), 60))
                   for name, seq in records)


def proteins(n, seed):
    rnd = random.Random(seed)
    db = [(f"p{i:05d}", "".join(rnd.choice(AMINO) for _ in range(LENGTH))) for i in range(n)]
    for i in range(0, n - 2, 100):
        for k, share in ((1, 0.3), (2, 0.45)):
            db[i + k] = (db[i + k][0], mutate(db[i][1], share, rnd))
    return db


def mutate(seq, share, rnd):
    s = list(seq)
    for i in rnd.sample(range(len(s)), int(len(s) * share)):
        s[i] = rnd.choice(AMINO.replace(s[i], ""))
    return "".join(s)


def generate(d, n, slices, query_files, seed):
    d.mkdir(parents=True)
    db = proteins(n, seed)
    rnd = random.Random(seed + 1)
    queries = [(f"q_{name}", mutate(seq, 0.2, rnd)) for name, seq in db[::100]]
    residues = sum(len(s) for _, s in db)
    (d / "all.fa").write_text(fasta(db))
    (d / "slices").mkdir()
    for k in range(slices):
        (d / "slices" / f"s{k}.fa").write_text(fasta(db[k::slices]))
    (d / "queries").mkdir()
    for i in range(query_files):
        (d / "queries" / f"q{i}.fa").write_text(fasta(queries[i::query_files]))
    (d / "bin").mkdir()
    shutil.copy(pathlib.Path(__file__), d / "bin" / "blast.py")
    tasks = workflow(slices, query_files, residues)
    (d / "workflow.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    (d / "planted.json").write_text(json.dumps({q: q[2:] for q, _ in queries}))
    print(f"{n} proteins ({residues} residues) in {slices} slices, {len(queries)} queries in {query_files} files, "
          f"{len(tasks)} tasks in {d / 'workflow.jsonl'}")


def workflow(slices, query_files, residues):
    tasks = []
    for k in range(slices):
        # the slice's database files travel as one archive, unpacked into a directory where it is read
        tasks.append({"name": f"makeblastdb-{k}",
                      "shell": f"makeblastdb -in s{k}.fa -dbtype prot -out db/s{k} > /dev/null && tar cf db.tar db",
                      "inputs": [{"id": f"slices/s{k}.fa", "name": f"s{k}.fa"}],
                      "outputs": [{"path": "db.tar", "id": f"db/s{k}.tar"}]})
    for i in range(query_files):
        for k in range(slices):
            tasks.append({"name": f"blastp-{i}-{k}",
                          "shell": f"blastp -query q{i}.fa -db db/db/s{k} -dbsize {residues} -evalue {EVALUE} "
                                   f"-outfmt '6 {FIELDS}' > hits.tsv",
                          "inputs": [{"id": f"queries/q{i}.fa", "name": f"q{i}.fa"},
                                     {"id": f"db/s{k}.tar", "unpack": "tar", "name": "db"}],
                          "outputs": [{"path": "hits.tsv", "id": f"hits/q{i}/s{k}.tsv"}]})
        # the gather: every slice's hits for this query file, in one directory
        tasks.append({"name": f"merge-{i}",
                      "shell": "python3 blast.py merge hits > best.tsv",
                      "inputs": [{"id": "bin/blast.py", "name": "blast.py"}]
                                + [{"id": f"hits/q{i}/s{k}.tsv", "name": "hits/"} for k in range(slices)],
                      "outputs": [{"path": "best.tsv", "id": f"results/q{i}.tsv"}]})
    return tasks


def best(lines):
    """The TOP best hits of each query: by bitscore, then e-value, then subject; queries in name order."""
    by_query = {}
    for line in lines:
        f = line.rstrip("\n").split("\t")
        if len(f) == 12:
            by_query.setdefault(f[0], []).append(f)
    out = []
    for q in sorted(by_query):
        rows = sorted(by_query[q], key=lambda f: (-float(f[11]), float(f[10]), f[1], int(f[8])))
        out.extend("\t".join(f) + "\n" for f in rows[:TOP])
    return "".join(out)


def merge(hits):
    lines = []
    for p in sorted(pathlib.Path(hits).iterdir()):
        lines.extend(p.read_text().splitlines(keepends=True))
    sys.stdout.write(best(lines))


def run(cmd, cwd):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        die(f"{' '.join(cmd)} failed: {r.stderr.strip()}")
    return r.stdout


def serial(d):
    residues = sum(len(l.strip()) for l in (d / "all.fa").read_text().splitlines() if not l.startswith(">"))
    ref = d / "reference"
    ref.mkdir(exist_ok=True)
    run(["makeblastdb", "-in", "all.fa", "-dbtype", "prot", "-out", "reference/all"], d)
    for q in sorted((d / "queries").glob("q*.fa")):
        out = run(["blastp", "-query", str(q), "-db", "reference/all", "-dbsize", str(residues), "-evalue", EVALUE,
                   "-outfmt", f"6 {FIELDS}"], d)
        (ref / f"{q.stem}.tsv").write_text(best(out.splitlines(keepends=True)))


def check(d):
    planted = json.loads((d / "planted.json").read_text())
    found = {}
    for ref in sorted((d / "reference").glob("q*.tsv")):
        merged = d / "results" / ref.name
        if not merged.exists():
            die(f"no merged result {merged}")
        if merged.read_bytes() != ref.read_bytes():
            die(f"{merged} differs from the whole-database search {ref}")
        for line in ref.read_text().splitlines():
            q, s = line.split("\t")[:2]
            found.setdefault(q, s)  # the first line of a query is its best hit
    missed = [q for q, s in planted.items() if found.get(q) != s]
    if missed:
        die(f"planted homologues not found as the best hit: {', '.join(missed)}")
    print(f"ok: the merged best hits equal the whole-database search; all {len(planted)} planted homologues found")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("dir", type=pathlib.Path)
    g.add_argument("--proteins", type=int, default=2000)
    g.add_argument("--slices", type=int, default=4)
    g.add_argument("--query-files", type=int, default=4)
    g.add_argument("--seed", type=int, default=7)
    for name in ("serial", "check", "merge"):
        sub.add_parser(name).add_argument("dir", type=pathlib.Path)
    a = ap.parse_args()
    if a.cmd == "generate":
        if a.dir.exists():
            die(f"{a.dir} exists: give a new directory")
        generate(a.dir, a.proteins, a.slices, a.query_files, a.seed)
    elif a.cmd == "serial":
        serial(a.dir)
    elif a.cmd == "check":
        check(a.dir)
    else:
        merge(a.dir)


if __name__ == "__main__":
    main()
