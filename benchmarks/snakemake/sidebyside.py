#!/usr/bin/env python3
"""The same Snakemake workflows run several ways, side by side, in paired rounds (each round runs
every way once, the order reversed every other round). Run it through benchmarks/snakemake/run.sh,
which makes the virtualenv and starts the real Slurm when a way needs it.

Workflows:
  gather    N short shell jobs (one echo each) and a gather of all their outputs
  variants  the variant calling of Snakemake's tutorial with the real tools (bwa mem, samtools
            sort and index, bcftools mpileup | call) over a seeded reference genome and reads
            simulated by a seeded generator (make_data.py)

Ways:
  cores2        snakemake --cores 2
  falkon        snakemake --executor falkon (an embedded dispatcher with its defaults)
  falkon-jobcmd the same with --falkon-always-job-command (Snakemake's job command for every job)
  falkon-slurm  snakemake --executor falkon --falkon-provisioner slurm (nodes included)
  slurm         snakemake --executor slurm (Snakemake's official plugin, one sbatch per job)

Every way's final output must be identical to the first way's (the VCF without its header lines
that name dates and command lines): a run that differs is an error, not a figure.
"""

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

GATHER = """
N = {n}
rule all:
    input: "all.txt"
rule gather:
    input: expand("parts/{{i}}.txt", i=range(N))
    output: "all.txt"
    shell: "cat {{input}} > {{output}}"
rule part:
    output: "parts/{{i}}.txt"
    shell: "echo {{wildcards.i}} > {{output}}"
"""

VARIANTS = """
SAMPLES = {samples!r}
rule all:
    input: "calls/all.vcf"
rule bwa_index:
    input: "data/genome.fa"
    output: multiext("data/genome.fa", ".amb", ".ann", ".bwt", ".pac", ".sa")
    shell: "bwa index {{input}} 2> /dev/null"
rule bwa_map:
    input: "data/genome.fa", multiext("data/genome.fa", ".amb", ".ann", ".bwt", ".pac", ".sa"),
           "data/samples/{{sample}}.fastq"
    output: "mapped/{{sample}}.bam"
    shell: "bwa mem -t 1 {{input[0]}} {{input[6]}} 2> /dev/null | samtools view -b -o {{output}} -"
rule samtools_sort:
    input: "mapped/{{sample}}.bam"
    output: "sorted/{{sample}}.bam"
    shell: "samtools sort -T sorted/{{wildcards.sample}} -o {{output}} {{input}}"
rule samtools_index:
    input: "sorted/{{sample}}.bam"
    output: "sorted/{{sample}}.bam.bai"
    shell: "samtools index {{input}}"
rule bcftools_call:
    input: fa="data/genome.fa", bam=expand("sorted/{{sample}}.bam", sample=SAMPLES),
           bai=expand("sorted/{{sample}}.bam.bai", sample=SAMPLES)
    output: "calls/all.vcf"
    shell: "bcftools mpileup -f {{input.fa}} {{input.bam}} 2> /dev/null | bcftools call -mv - 2> /dev/null > {{output}}"
"""

FINAL = {"gather": "all.txt", "variants": "calls/all.vcf"}


def way_command(way, args):
    base = [args.python, "-m", "snakemake", "all", "--nocolor"]
    if way == "cores2":
        return base + ["--cores", "2"]
    if way == "falkon":
        return base + ["--executor", "falkon", "--jobs", str(args.jobs_in_flight)]
    if way == "falkon-jobcmd":
        return base + ["--executor", "falkon", "--jobs", str(args.jobs_in_flight), "--falkon-always-job-command"]
    if way == "falkon-slurm":
        return base + ["--executor", "falkon", "--jobs", str(args.jobs_in_flight), "--falkon-provisioner", "slurm",
                       "--falkon-max-nodes", str(args.nodes), "--falkon-slots", str(args.slots),
                       "--falkon-idle", "10"]
    if way == "slurm":
        return base + ["--executor", "slurm", "--jobs", str(args.jobs_in_flight),
                       "--default-resources", "slurm_partition=debug", "mem_mb=400", "runtime=10",
                       "--seconds-between-status-checks", "1"]
    raise SystemExit(f"sidebyside: unknown way {way!r} (cores2, falkon, falkon-jobcmd, falkon-slurm, slurm)")


def digest(path):
    """The final output's SHA-256; for a VCF, without the ## lines (they name dates, versions and
    the command line: the calls are what must match)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for line in f:
            if not line.startswith(b"##"):
                h.update(line)
    return h.hexdigest()


def prepare(workdir, args):
    if os.path.exists(workdir):
        shutil.rmtree(workdir)
    os.makedirs(workdir)
    if args.workflow == "gather":
        text = GATHER.format(n=args.tasks)
    else:
        samples = [f"S{i}" for i in range(args.samples)]
        shutil.copytree(args.data, os.path.join(workdir, "data"))
        text = VARIANTS.format(samples=samples)
    with open(os.path.join(workdir, "Snakefile"), "w") as f:
        f.write(text.lstrip())


def jobs_of(args):
    # gather: N parts + the gather; variants: the index, 3 per sample, the call (the "all" target
    # is not a job that runs)
    return args.tasks + 1 if args.workflow == "gather" else 2 + 3 * args.samples


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workflow", choices=["gather", "variants"], default="gather")
    ap.add_argument("--tasks", type=int, default=1000, help="gather: short jobs before the gather")
    ap.add_argument("--samples", type=int, default=8, help="variants: samples")
    ap.add_argument("--data", help="variants: the directory make_data.py wrote")
    ap.add_argument("--ways", default="cores2,falkon")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs-in-flight", type=int, default=100, help="snakemake --jobs for the executors")
    ap.add_argument("--nodes", type=int, default=2, help="falkon-slurm: most nodes")
    ap.add_argument("--slots", type=int, default=2, help="falkon-slurm: slots per node")
    ap.add_argument("--python", default=sys.executable, help="the Python that has Snakemake and the plugins")
    ap.add_argument("--out", default="target/snakemake-bench")
    ap.add_argument("--results", default="bench-results",
                    help="where snakemake.json goes (one row per workflow and way, the latest medians) for "
                         "falkon bench report")
    args = ap.parse_args()
    ways = args.ways.split(",")
    os.makedirs(args.out, exist_ok=True)
    record = os.path.join(args.out, f"{args.workflow}.jsonl")
    walls = {w: [] for w in ways}
    expected = None
    for r in range(args.rounds):
        for way in (ways if r % 2 == 0 else ways[::-1]):
            workdir = os.path.abspath(os.path.join(args.out, "work", f"{args.workflow}-{way}"))
            prepare(workdir, args)
            cmd = way_command(way, args)
            t0 = time.monotonic()
            p = subprocess.run(cmd, cwd=workdir, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            wall = time.monotonic() - t0
            if p.returncode != 0:
                sys.stderr.write(p.stdout[-6000:])
                raise SystemExit(f"sidebyside: {way} failed (exit {p.returncode}) in {workdir}: {' '.join(cmd)}")
            d = digest(os.path.join(workdir, FINAL[args.workflow]))
            if expected is None:
                expected = d
            elif d != expected:
                raise SystemExit(f"sidebyside: {way}'s {FINAL[args.workflow]} differs from the first way's ({workdir})")
            walls[way].append(wall)
            with open(record, "a") as f:
                f.write(json.dumps({"workflow": args.workflow, "way": way, "round": r, "jobs": jobs_of(args),
                                    "wall_s": round(wall, 3), "output_sha256": d}) + "\n")
            print(f"round {r + 1}/{args.rounds} {way:13s} {wall:8.2f} s", flush=True)
    jobs = jobs_of(args)
    first = ways[0]
    print(f"\n{args.workflow}: {jobs} jobs, {args.rounds} paired rounds, median wall; every way's output identical")
    print(f"| way | wall (s) | jobs/s | vs {first} |")
    print("|---|---:|---:|---:|")
    rows = []
    for way in ways:
        m = statistics.median(walls[way])
        ratio = statistics.median(walls[first]) / m
        print(f"| {way} | {m:.2f} | {jobs / m:.1f} | {ratio:.2f}x |")
        rows.append({"workflow": args.workflow, "way": way, "jobs": jobs, "rounds": args.rounds,
                     "wallSeconds": round(m, 3), "jobsPerSecond": round(jobs / m, 3)})
    save(args.results, rows)


def save(results, rows):
    """Merges these rows into RESULTS/snakemake.json (a row per workflow and way: the latest wins),
    in the shape falkon bench report reads (title, meta, rows)."""
    os.makedirs(results, exist_ok=True)
    path = os.path.join(results, "snakemake.json")
    doc = {"benchmark": "snakemake", "title": "snakemake: the same workflows by --cores 2, the Falkon executor "
           "(embedded and on Slurm nodes) and Snakemake's Slurm executor", "meta": {}, "rows": []}
    if os.path.exists(path):
        with open(path) as f:
            doc = json.load(f)
    keep = {(r["workflow"], r["way"]) for r in rows}
    doc["rows"] = [r for r in doc["rows"] if (r["workflow"], r["way"]) not in keep] + rows
    doc["meta"] = {"cores": os.cpu_count(), "python": sys.version.split()[0],
                   "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)


if __name__ == "__main__":
    main()
