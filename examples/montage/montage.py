#!/usr/bin/env python3
"""A Montage mosaic as ONE Falkon task file (docs/workflows.md).

The sky is a real image: m13.fits, a 300x300 SkyView image of M13 with a celestial WCS that ships in
the astropy wheel (BSD-licensed), reprojected to finer pixels and cut into N x N overlapping tiles,
each with a planted background offset. The workflow then does what Montage's mosaic recipe does
(seed 004 section III-A): mProjectPP per tile, mImgtbl, mOverlaps, mDiff per overlap, mFitExec (a
gather of every difference), mBgModel, mBackground per tile, mImgtbl again and mAdd (a gather of
every corrected tile). Each task declares what it reads (inputs) and writes (outputs); the dispatcher
runs it once its inputs' producers have succeeded. The same commands also run serially, for a
reference mosaic that the workflow's must equal byte for byte.

  montage.py fetch CACHE               m13.fits into CACHE (pip download of the astropy wheel)
  montage.py generate DIR [--tiles N] [--pace S] [--m13 FILE]
                                        the sky, its tiles, workflow.jsonl, serial.sh, offsets.json
  montage.py serial DIR                 runs serial.sh in DIR/serial (the reference)
  montage.py check DIR                  the mosaic equals the reference; the fitted corrections
                                        recover the planted offsets

Needs the Debian package montage (mProjectPP, mImgtbl, ...) and Python 3 (standard library only).
"""
import argparse
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import zipfile

ASTROPY = "astropy==8.0.2"
M13_IN_WHEEL = "astropy/io/fits/hdu/compressed/tests/data/m13.fits"
TILE = 250          # tile size in pixels of the sky
M13_PIXEL_DEG = 0.00027770002   # m13.fits: 300 x 300 pixels of this size
M13_PIXELS = 300


def die(msg):
    print(f"montage.py: {msg}", file=sys.stderr)
    sys.exit(2)


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, shell=isinstance(cmd, str), capture_output=True, text=True)
    if p.returncode != 0 or 'stat="ERROR"' in p.stdout:
        die(f"{cmd} failed in {cwd}: {p.stdout.strip()} {p.stderr.strip()}")
    return p.stdout


def fetch(cache):
    """m13.fits from the astropy wheel (only that file is kept): a real sky image with a celestial WCS."""
    cache = pathlib.Path(cache)
    m13 = cache / "m13.fits"
    if m13.exists():
        return m13
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                            "--quiet", ASTROPY, "-d", d], capture_output=True, text=True)
        wheels = list(pathlib.Path(d).glob("astropy-*.whl"))
        if p.returncode != 0 or not wheels:
            die(f"cannot download {ASTROPY} from PyPI: {p.stderr.strip()[-300:]}")
        with zipfile.ZipFile(wheels[0]) as z:
            tmp = cache / "m13.fits.part"
            tmp.write_bytes(z.read(M13_IN_WHEEL))
            tmp.rename(m13)
    return m13


def header(n):
    """The sky's frame: M13's field in n x n pixels (finer the more tiles), RA---TAN/DEC--TAN as m13.fits."""
    pixel = M13_PIXEL_DEG * M13_PIXELS / n
    return "\n".join([
        "SIMPLE  = T", "BITPIX  = -64", "NAXIS   = 2", f"NAXIS1  = {n}", f"NAXIS2  = {n}",
        "CTYPE1  = 'RA---TAN'", "CTYPE2  = 'DEC--TAN'", "EQUINOX = 2000",
        "CRVAL1  = 250.4226", "CRVAL2  = 36.4602", f"CRPIX1  = {n / 2 + 0.5}", f"CRPIX2  = {n / 2 + 0.5}",
        f"CDELT1  = {-pixel:.11f}", f"CDELT2  = {pixel:.11f}", "CROTA2  = 0.0", "END", ""])


def offsets(names):
    """The background planted in each tile: steps of 20 between -100 and 100, deterministic."""
    return {name: ((k * 37) % 11 - 5) * 20 for k, name in enumerate(names)}


# The list of images a table is built from: sorted, as mImgtbl would otherwise follow the directory
# order (which differs between file systems, and so would the mosaic).
IMGTBL = ("printf '|fname        |\\n|char         |\\n' > list.tbl; ls t_*.fits | grep -v _area | LC_ALL=C sort "
          "| sed 's/^/ /' >> list.tbl; mImgtbl -t list.tbl . {out}")


def generate(d, tiles, pace, m13, temporary=False):
    d = pathlib.Path(d).resolve()
    if not shutil.which("mProjectPP"):
        die("Montage is not installed (Debian: apt-get install montage)")
    d.mkdir(parents=True, exist_ok=True)
    step = TILE * 7 // 10
    n = step * (tiles - 1) + TILE
    (d / "sky.hdr").write_text(header(n))
    shutil.copy(m13, d / "m13.fits")
    run(["mProjectPP", "m13.fits", "sky.fits", "sky.hdr"], d)
    (d / "raw").mkdir(exist_ok=True)
    (d / "region.hdr").write_text(header(n))
    names = [f"t_{i}_{j}" for i in range(tiles) for j in range(tiles)]
    planted = offsets(names)
    for name in names:
        i, j = (int(x) for x in name.split("_")[1:])
        cut = d / f"{name}.cut.fits"
        run(["mSubimage", "-p", "sky.fits", str(cut), str(i * step), str(j * step), str(TILE), str(TILE)], d)
        # mBackground subtracts the plane A*x + B*y + C: C = -offset adds the offset
        run(["mBackground", "-n", str(cut), f"raw/{name}.fits", "0", "0", str(-planted[name])], d)
        cut.unlink()
    (d / "offsets.json").write_text(json.dumps(planted, indent=1) + "\n")
    # which tiles overlap: from the raw tiles' table, in the order the workflow's will have
    pairs = overlaps(d, names)
    tasks = workflow(names, pairs, pace, temporary)
    (d / "workflow.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    (d / "serial.sh").write_text(serial_script(names, pairs))
    print(f"{d}/workflow.jsonl: {len(tasks)} tasks ({tiles}x{tiles} tiles, {len(pairs)} overlaps)")


def overlaps(d, names):
    with tempfile.TemporaryDirectory() as t:
        for name in names:
            shutil.copy(d / "raw" / f"{name}.fits", pathlib.Path(t) / f"{name}.fits")
        run(IMGTBL.format(out="images.tbl"), t)
        run(["mOverlaps", "images.tbl", "diffs.tbl"], t)
        pairs = []
        for line in (pathlib.Path(t) / "diffs.tbl").read_text().splitlines():
            if line.startswith("|") or line.startswith("\\") or not line.strip():
                continue
            _, _, plus, minus, diff = line.split()
            pairs.append((plus[:-5], minus[:-5], diff[:-5]))
        return pairs


# the intermediate images (projected, differences, corrected): with --temporary they stay on the executors
INTERMEDIATE = ("proj/", "diffs/", "corr/")


def task(name, shell, inputs, outputs, pace, temporary=False):
    def output(path, oid):
        o = {"path": path, "id": oid}
        if temporary and oid.startswith(INTERMEDIATE):
            o["temporary"] = True
        return o
    # Montage's programs only read their inputs: each may be given as a read-only view of the stored or
    # cached file instead of a copy of its own (docs/data-diffusion.md, "Read-only inputs")
    return {"name": name, "shell": (f"sleep {pace}; " if pace else "") + shell,
            "inputs": [dict(i, readOnly=True) for i in inputs], "outputs": [output(p, i) for p, i in outputs]}


def workflow(names, pairs, pace, temporary=False):
    """The whole mosaic, one task per step and per tile or overlap, each naming what it reads and writes;
    with temporary, the intermediate images are marked to stay in the executors' caches."""
    def task_(*args):
        return task(*args, temporary=temporary)
    region = {"id": "region.hdr"}
    proj = [{"id": f"proj/{t}.fits"} for t in names]
    proj_area = [{"id": f"proj/{t}_area.fits"} for t in names]
    tasks = []
    for t in names:
        tasks.append(task_(f"project-{t}", f"mProjectPP raw_{t}.fits {t}.fits region.hdr",
                          [{"id": f"raw/{t}.fits", "name": f"raw_{t}.fits"}, region],
                          [(f"{t}.fits", f"proj/{t}.fits"), (f"{t}_area.fits", f"proj/{t}_area.fits")], pace))
    tasks.append(task_("images", IMGTBL.format(out="images.tbl"), proj, [("images.tbl", "tables/images.tbl")], pace))
    tasks.append(task_("overlaps", "mOverlaps images.tbl diffs.tbl", [{"id": "tables/images.tbl"}],
                      [("diffs.tbl", "tables/diffs.tbl")], pace))
    for plus, minus, diff in pairs:
        tasks.append(task_(f"diff-{plus}-{minus}", f"mDiff {plus}.fits {minus}.fits {diff}.fits region.hdr",
                          [{"id": f"proj/{x}{a}.fits"} for x in (plus, minus) for a in ("", "_area")] + [region],
                          [(f"{diff}.fits", f"diffs/{diff}.fits"), (f"{diff}_area.fits", f"diffs/{diff}_area.fits")],
                          pace))
    diffs = [{"id": f"diffs/{d}{a}.fits"} for _, _, d in pairs for a in ("", "_area")]
    tasks.append(task_("fit", "mFitExec diffs.tbl fits.tbl .", [{"id": "tables/diffs.tbl"}] + diffs,
                      [("fits.tbl", "tables/fits.tbl")], pace))
    tasks.append(task_("model", "mBgModel images.tbl fits.tbl corrections.tbl",
                      [{"id": "tables/images.tbl"}, {"id": "tables/fits.tbl"}],
                      [("corrections.tbl", "tables/corrections.tbl")], pace))
    for t in names:
        tasks.append(task_(f"background-{t}", f"mkdir corr; mBackground -t {t}.fits corr/{t}.fits images.tbl "
                          "corrections.tbl", [{"id": f"proj/{t}.fits"}, {"id": f"proj/{t}_area.fits"},
                                              {"id": "tables/images.tbl"}, {"id": "tables/corrections.tbl"}],
                          [(f"corr/{t}.fits", f"corr/{t}.fits"), (f"corr/{t}_area.fits", f"corr/{t}_area.fits")],
                          pace))
    corr = [{"id": f"corr/{t}.fits"} for t in names]
    corr_area = [{"id": f"corr/{t}_area.fits"} for t in names]
    tasks.append(task_("corrected", IMGTBL.format(out="cimages.tbl"), corr, [("cimages.tbl", "tables/cimages.tbl")],
                      pace))
    tasks.append(task_("add", "mAdd -p . cimages.tbl region.hdr mosaic.fits",
                      corr + corr_area + [{"id": "tables/cimages.tbl"}, region],
                      [("mosaic.fits", "mosaic.fits"), ("mosaic_area.fits", "mosaic_area.fits")], pace))
    assert len(proj_area) == len(names)
    return tasks


def serial_script(names, pairs):
    """The same commands, one after another in one directory: the reference mosaic."""
    lines = ["#!/bin/sh", "# The workflow's commands run serially (montage.py serial runs this in DIR/serial).",
             "set -e"]
    for t in names:
        lines.append(f"cp ../raw/{t}.fits raw_{t}.fits")
    lines.append("cp ../region.hdr region.hdr")
    for t in names:
        lines.append(f"mProjectPP raw_{t}.fits {t}.fits region.hdr")
    lines.append(IMGTBL.format(out="images.tbl"))
    lines.append("mOverlaps images.tbl diffs.tbl")
    for plus, minus, diff in pairs:
        lines.append(f"mDiff {plus}.fits {minus}.fits {diff}.fits region.hdr")
    lines.append("mFitExec diffs.tbl fits.tbl .")
    lines.append("mBgModel images.tbl fits.tbl corrections.tbl")
    lines.append("mkdir -p corr")
    for t in names:
        lines.append(f"mBackground -t {t}.fits corr/{t}.fits images.tbl corrections.tbl")
    lines.append(f"cd corr && {IMGTBL.format(out='cimages.tbl')} && cp ../region.hdr . && "
                 "mAdd -p . cimages.tbl region.hdr mosaic.fits")
    return "\n".join(lines) + "\n"


def serial(d):
    d = pathlib.Path(d).resolve()
    s = d / "serial"
    shutil.rmtree(s, ignore_errors=True)
    s.mkdir()
    p = subprocess.run(["sh", str(d / "serial.sh")], cwd=s, capture_output=True, text=True)
    if p.returncode != 0:
        die(f"serial.sh failed: {p.stderr.strip()[-500:]}")
    print(f"{s}/corr/mosaic.fits: the reference")


def sha256(p):
    return hashlib.sha256(pathlib.Path(p).read_bytes()).hexdigest()


def table(path):
    """Rows of an IPAC table as dicts: columns are fixed-width, between the header's bars."""
    rows, cols = [], None
    for line in pathlib.Path(path).read_text().splitlines():
        if line.startswith("\\"):
            continue
        if line.startswith("|"):
            if cols is None:
                bars = [i for i, ch in enumerate(line) if ch == "|"]
                cols = [(line[a + 1:b].strip(), a, b) for a, b in zip(bars, bars[1:])]
            continue
        if line.strip():
            rows.append({name: line[a:b + 1].strip() for name, a, b in cols})
    return rows


def check(d):
    d = pathlib.Path(d).resolve()
    mosaic, ref = d / "mosaic.fits", d / "serial" / "corr" / "mosaic.fits"
    for p in (mosaic, ref):
        if not p.exists():
            die(f"{p} is missing")
    same = sha256(mosaic) == sha256(ref)
    print(f"mosaic {'==' if same else '!='} the serial reference ({sha256(mosaic)[:16]})")
    # the corrections' constants step as the planted offsets do (up to one constant for the whole sky)
    planted = json.loads((d / "offsets.json").read_text())
    names = {r["cntr"]: r["fname"][:-5] for r in table(d / "tables" / "images.tbl")}
    c = {names[r["id"]]: float(r["c"]) for r in table(d / "tables" / "corrections.tbl")}
    base = sorted(c)[0]
    worst = max(abs((c[t] - c[base]) - (planted[t] - planted[base])) for t in c)
    print(f"fitted corrections recover the planted offsets to within {worst:.3g} (steps of 20)")
    if not same or worst > 0.5:
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch")
    f.add_argument("cache")
    g = sub.add_parser("generate")
    g.add_argument("dir")
    g.add_argument("--tiles", type=int, default=3)
    g.add_argument("--pace", type=float, default=0, help="seconds each task sleeps first (tests)")
    g.add_argument("--m13", default=None, help="m13.fits (default: fetched into DIR/.cache)")
    g.add_argument("--temporary", action="store_true",
                   help="mark the intermediate images temporary: kept on the executors, never written to the store")
    s = sub.add_parser("serial")
    s.add_argument("dir")
    c = sub.add_parser("check")
    c.add_argument("dir")
    a = ap.parse_args()
    if a.cmd == "fetch":
        print(fetch(a.cache))
    elif a.cmd == "generate":
        if a.tiles < 2:
            die("--tiles must be at least 2")
        m13 = a.m13 or fetch(os.path.join(a.dir, ".cache"))
        generate(a.dir, a.tiles, a.pace, m13, a.temporary)
    elif a.cmd == "serial":
        serial(a.dir)
    else:
        check(a.dir)


if __name__ == "__main__":
    main()
