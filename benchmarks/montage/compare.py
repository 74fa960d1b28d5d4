#!/usr/bin/env python3
"""The Montage workflow of examples/montage side by side, in paired rounds (issues 33, 35):

  serial   the workflow's commands one after another (the example's serial.sh)
  stages   the same commands stage by stage, each stage's tasks through `xargs -P CORES`
  falkon   the ONE task file run by `falkon run --store . workflow.jsonl` (no other option); its
           inputs are marked readOnly, so the C executor gives each as a read-only view of the
           stored file where it can (docs/data-diffusion.md, "Read-only inputs")
  fal-copy the same task file without readOnly: every input a copy in the task's sandbox
  fal-tmp  the task file with the intermediates temporary (montage.py --temporary), `falkon run
           --store . --cache-size 1g` (its default policy with a cache: good-cache-compute)
  inplace  `falkon run` on the commands in one shared directory, ordered by `after`
  swift    the same workflow as a SwiftScript program on Swift/K with its `local` provider
           (maxParallelTasks = CORES), when ../shared/swift-k is there
  swift-f  the same program on Swift/K with the `falkon` provider (a `falkon dispatcher` and one C
           executor of CORES slots started for it)
  parsl-h  the in-place commands as Parsl bash_apps (dependencies as futures) on Parsl's
           HighThroughputExecutor (CORES workers), when a Parsl virtualenv is there
  parsl-f  the same on falkon.parsl.FalkonExecutor (its own dispatcher and executor)

Besides wall time it reports the framework's own CPU (the way's CPU, every process it waited for,
less the serial run's: the Montage programs' share) and what the store served and received: the
falkon rows' counters; a way working in one shared directory reads and writes there what the task
file declares (the falkon row's figures).

Each round runs every way in a fresh copy of the generated sky, in a rotated order, and checks
that each mosaic is byte-identical to the serial one. CPU is what the whole machine spent busy
during a way (/proc/stat: some ways' processes are never waited for), so run it on an idle machine.
The CPU-bound limit of a round is the serial run's CPU divided by the cores: no schedule on this
machine can finish the same work sooner.

  benchmarks/montage/compare.py [--tiles 6] [--rounds 3] [--ways stages,falkon,...] [--work DIR]
(after ./mvnw -q install -DskipTests; needs Montage: apt-get install montage; the Parsl rows need
the virtualenv python/run-parsl-tests.sh makes, or FALKON_PARSL_VENV)
"""
import argparse
import hashlib
import json
import pathlib
import shutil
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "montage"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import montage  # noqa: E402  (the example's generator: the same sky, tiles and commands)
from sidebyside import (CORES, keep_ways, optional_ways, rounds, run_parsl, run_swift, store_bytes,  # noqa: E402
                        summary, timed, unpack_swift)

def stages_script(names, pairs):
    """serial.sh's commands with each stage's independent tasks through xargs -P CORES."""
    xargs = f"xargs -P {CORES}"
    tiles = " ".join(names)
    triples = " ".join(f"{p} {m} {d}" for p, m, d in pairs)
    return "\n".join([
        "#!/bin/sh",
        "# The workflow stage by stage: a stage starts when the previous one's slowest task ends.",
        "set -e",
        f"for t in {tiles}; do cp ../raw/$t.fits raw_$t.fits; done",
        "cp ../region.hdr region.hdr",
        f"printf '%s\\n' {tiles} | {xargs} -n 1 sh -c 'mProjectPP raw_$0.fits $0.fits region.hdr'",
        montage.IMGTBL.format(out="images.tbl"),
        "mOverlaps images.tbl diffs.tbl",
        f"printf '%s %s %s\\n' {triples} | {xargs} -n 3 sh -c 'mDiff $0.fits $1.fits $2.fits region.hdr'",
        "mFitExec diffs.tbl fits.tbl .",
        "mBgModel images.tbl fits.tbl corrections.tbl",
        "mkdir -p corr",
        f"printf '%s\\n' {tiles} | {xargs} -n 1 sh -c "
        "'mBackground -t $0.fits corr/$0.fits images.tbl corrections.tbl'",
        f"cd corr && {montage.IMGTBL.format(out='cimages.tbl')} && cp ../region.hdr . && "
        "mAdd -p . cimages.tbl region.hdr mosaic.fits",
    ]) + "\n"


def in_place_tasks(names, pairs, run):
    """The workflow as tasks that read and write one directory in place (a shared file system),
    ordered by `after` alone: no inputs or outputs declared, so nothing is staged."""
    tasks = []

    def task(name, shell, after=()):
        tasks.append({"name": name, "shell": shell, "dir": str(run), "after": list(after)})

    for t in names:
        task(f"project-{t}", f"cp ../raw/{t}.fits raw_{t}.fits && mProjectPP raw_{t}.fits {t}.fits region.hdr")
    projected = [f"project-{t}" for t in names]
    task("images", montage.IMGTBL.format(out="images.tbl"), projected)
    task("overlaps", "mOverlaps images.tbl diffs.tbl", ["images"])
    for p, m, d in pairs:
        task(f"diff-{d}", f"mDiff {p}.fits {m}.fits {d}.fits region.hdr", [f"project-{p}", f"project-{m}"])
    task("fit", "mFitExec diffs.tbl fits.tbl .", ["overlaps"] + [f"diff-{d}" for _, _, d in pairs])
    task("model", "mBgModel images.tbl fits.tbl corrections.tbl", ["fit"])
    task("corr-dir", "mkdir -p corr && cp region.hdr corr/", ["model"])
    for t in names:
        task(f"background-{t}", f"mBackground -t {t}.fits corr/{t}.fits images.tbl corrections.tbl", ["corr-dir"])
    task("add", f"cd corr && {montage.IMGTBL.format(out='cimages.tbl')} && mAdd -p . cimages.tbl region.hdr "
         "mosaic.fits", [f"background-{t}" for t in names])
    return "".join(json.dumps(t) + "\n" for t in tasks)


# an image table from the files it is given, sorted (as the task file's IMGTBL does from a listing);
# the column is wide enough for the paths Swift passes (an IPAC table cuts a value at its column)
IMGTBL_SH = """#!/bin/sh
out=$1; shift
printf '|fname%59s|\\n|char%60s|\\n' '' '' > list.tbl
printf ' %s\\n' "$@" | LC_ALL=C sort >> list.tbl
mImgtbl -t list.tbl . "$out"
"""


def swift_script(names, pairs, imgtbl):
    """The workflow in SwiftScript: Swift runs each app when its input files exist (dataflow)."""
    idx = {t: k for k, t in enumerate(names)}

    def files(fmt, items):
        return "[" + ", ".join(f'"{fmt.format(x)}"' for x in items) + "]"

    n, m = len(names), len(pairs)
    diffs = [d for _, _, d in pairs]
    return f"""type file;

app (file img, file area) project (file raw, file hdr) {{
    mProjectPP @raw @img @hdr;
}}
app (file tbl) imgtbl (file imgs[]) {{
    sh "{imgtbl}" @tbl @filenames(imgs);
}}
app (file diffs) overlaps (file images) {{
    mOverlaps @images @diffs;
}}
app (file d, file darea) diff (file p, file parea, file q, file qarea, file hdr) {{
    mDiff @p @q @d @hdr;
}}
app (file fits) fitexec (file diffs, file ds[], file dareas[]) {{
    mFitExec @diffs @fits "diffs";
}}
app (file corrections) bgmodel (file images, file fits) {{
    mBgModel @images @fits @corrections;
}}
app (file out, file outarea) background (file p, file parea, file images, file corrections) {{
    mBackground "-t" @p @out @images @corrections;
}}
app (file mosaic, file marea) add (file cimages, file hdr, file cs[], file careas[]) {{
    mAdd "-p" "." @cimages @hdr @mosaic;
}}

file hdr <"region.hdr">;
file raw[] <array_mapper; files={files("raw/{}.fits", names)}>;
file proj[] <array_mapper; files={files("proj/{}.fits", names)}>;
file projArea[] <array_mapper; files={files("proj/{}_area.fits", names)}>;
file images <"tables/images.tbl">;
file diffsTbl <"tables/diffs.tbl">;
file d[] <array_mapper; files={files("diffs/{}.fits", diffs)}>;
file dArea[] <array_mapper; files={files("diffs/{}_area.fits", diffs)}>;
file fits <"tables/fits.tbl">;
file corrections <"tables/corrections.tbl">;
file corr[] <array_mapper; files={files("corr/{}.fits", names)}>;
file corrArea[] <array_mapper; files={files("corr/{}_area.fits", names)}>;
file cimages <"tables/cimages.tbl">;
file mosaic <"mosaic.fits">;
file mosaicArea <"mosaic_area.fits">;
int plus[] = [{", ".join(str(idx[p]) for p, _, _ in pairs)}];
int minus[] = [{", ".join(str(idx[q]) for _, q, _ in pairs)}];

foreach i in [0:{n - 1}] {{
    (proj[i], projArea[i]) = project(raw[i], hdr);
}}
images = imgtbl(proj);
diffsTbl = overlaps(images);
foreach k in [0:{m - 1}] {{
    (d[k], dArea[k]) = diff(proj[plus[k]], projArea[plus[k]], proj[minus[k]], projArea[minus[k]], hdr);
}}
fits = fitexec(diffsTbl, d, dArea);
corrections = bgmodel(images, fits);
foreach i in [0:{n - 1}] {{
    (corr[i], corrArea[i]) = background(proj[i], projArea[i], images, corrections);
}}
cimages = imgtbl(corr);
(mosaic, mosaicArea) = add(cimages, hdr, corr, corrArea);
"""


def sha(p):
    return hashlib.sha256(pathlib.Path(p).read_bytes()).hexdigest()


def fresh(sky, run):
    """A copy of what every way starts from: the raw tiles and the region's header."""
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir(parents=True)
    shutil.copytree(sky / "raw", run / "raw")
    shutil.copy(sky / "region.hdr", run / "region.hdr")
    return run


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tiles", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ways", default=None, help="only these ways, comma-separated (serial always runs: the reference)")
    ap.add_argument("--work", default=None, help="scratch directory (default: target/montage-bench)")
    a = ap.parse_args()
    work = pathlib.Path(a.work or ROOT / "target" / "montage-bench").resolve()
    shutil.rmtree(work, ignore_errors=True)
    sky = work / "sky"
    m13 = montage.fetch(ROOT / "target" / "montage-cache")
    montage.generate(sky, a.tiles, 0, m13)
    sky_tmp = work / "sky-tmp"
    montage.generate(sky_tmp, a.tiles, 0, m13, temporary=True)
    names = [f"t_{i}_{j}" for i in range(a.tiles) for j in range(a.tiles)]
    pairs = montage.overlaps(sky, names)
    (sky / "stages.sh").write_text(stages_script(names, pairs))
    (sky / "imgtbl.sh").write_text(IMGTBL_SH)
    (sky / "montage.swift").write_text(swift_script(names, pairs, sky / "imgtbl.sh"))
    tasks = len((sky / "workflow.jsonl").read_text().splitlines())

    swift = unpack_swift(work)

    def serial(run):
        (run / "serial").mkdir()
        r = timed(["sh", str(sky / "serial.sh")], run / "serial")
        return r, run / "serial" / "corr" / "mosaic.fits"

    def stages(run):
        (run / "stages").mkdir()
        r = timed(["sh", str(sky / "stages.sh")], run / "stages")
        return r, run / "stages" / "corr" / "mosaic.fits"

    def falkon(run):
        shutil.copy(sky / "workflow.jsonl", run)
        r = timed([str(ROOT / "bin" / "falkon"), "run", "-q", "--json", "--store", ".", "workflow.jsonl"], run)
        STORE["falkon"] = store_bytes()
        return r, run / "mosaic.fits"

    def falkon_copy(run):
        lines = [json.loads(line) for line in (sky / "workflow.jsonl").read_text().splitlines()]
        for t in lines:
            for i in t.get("inputs", ()):
                i.pop("readOnly", None)
        (run / "workflow.jsonl").write_text("".join(json.dumps(t) + "\n" for t in lines))
        r = timed([str(ROOT / "bin" / "falkon"), "run", "-q", "--json", "--store", ".", "workflow.jsonl"], run)
        STORE["fal-copy"] = store_bytes()
        return r, run / "mosaic.fits"

    def in_place(run):
        (run / "inplace").mkdir()
        (run / "inplace" / "region.hdr").write_text((sky / "region.hdr").read_text())
        (run / "inplace.jsonl").write_text(in_place_tasks(names, pairs, run / "inplace"))
        r = timed([str(ROOT / "bin" / "falkon"), "run", "-q", "inplace.jsonl"], run)
        return r, run / "inplace" / "corr" / "mosaic.fits"

    def swift_way(provider):
        return lambda run: (run_swift(swift, sky / "montage.swift", run, provider), run / "mosaic.fits")

    def falkon_tmp(run):
        shutil.copy(sky_tmp / "workflow.jsonl", run)
        r = timed([str(ROOT / "bin" / "falkon"), "run", "-q", "--json", "--store", ".", "--cache-size", "1g",
                   "workflow.jsonl"], run)
        STORE["fal-tmp"] = store_bytes()
        return r, run / "mosaic.fits"

    def parsl_way(kind):
        def way(run):
            (run / "inplace").mkdir()
            (run / "inplace" / "region.hdr").write_text((sky / "region.hdr").read_text())
            r = run_parsl(kind, in_place_tasks(names, pairs, run / "inplace"), run)
            return r, run / "inplace" / "corr" / "mosaic.fits"
        return way

    STORE = {}
    ways = {"serial": serial, "stages": stages, "falkon": falkon, "fal-copy": falkon_copy, "fal-tmp": falkon_tmp,
            "inplace": in_place}
    ways = keep_ways(optional_ways(ways, swift, swift_way, parsl_way), a.ways)
    print(f"{tasks} tasks ({a.tiles}x{a.tiles} tiles, {len(pairs)} overlaps), {CORES} cores")
    rows, cpus, limits = rounds(ways, a.rounds, lambda w, r: fresh(sky, work / f"r{r}" / w), sha, "mosaic")
    summary(ways, rows, cpus, STORE, limits, "montage")


if __name__ == "__main__":
    main()
