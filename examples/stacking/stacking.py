#!/usr/bin/env python3
"""AstroPortal stacking (seed 000 sections 1-2 and 4.4.6) as one Falkon task file.

A seeded generator makes a small sky survey: overlapping FITS images with a celestial WCS and
Gaussian noise, and a catalogue of faint sources injected below single-image detection, each in
every image that covers it. A stacking run takes a list of sky positions: one task per image crops
the cutouts of every listed position it covers, and one gather sums each position's cutouts. A
source stacked over N images stands out about sqrt(N) times more clearly; a blank position does
not. `check` compares the run with a serial reference (bit for bit) and measures each position.

    stacking.py generate DIR [--grid G] [--sources S] [--seed N]
    stacking.py serial DIR     # the same crops and sums in one process, for reference
    stacking.py check DIR      # stacked = reference, sources detected at about sqrt(N) x, blanks not
    stacking.py cut IMAGE POSITIONS OUT      (a task)  the cutouts IMAGE covers, one HDU each
    stacking.py stack CUTOUT_DIR OUT         (the gather)  each position's cutouts summed

Needs Python 3 with astropy and numpy (run.sh makes a virtualenv with them from PyPI).
"""
import argparse
import json
import math
import pathlib
import shutil
import sys
import zlib

import numpy as np
from astropy.io import fits
from astropy.wcs import WCS

SIZE = 160             # pixels per image side
SCALE = 1.0 / 3600     # degrees per pixel (1 arcsecond)
STEP = 40              # pixels between neighbouring image centres: each point in up to (SIZE / STEP)^2
CUT = 10               # a cutout is (2 CUT + 1) pixels square
PSF = 2.0              # source profile sigma, pixels
APERTURE = 3.0         # photometry radius, pixels
SINGLE_SNR = 1.5       # a source's signal to noise in one image: far below detection (5)
CENTER = (150.0, 2.0)  # the survey's centre, degrees


def die(msg):
    print(f"stacking.py: {msg}", file=sys.stderr)
    sys.exit(1)


def wcs_at(ra, dec):
    w = WCS(naxis=2)
    w.wcs.ctype = ["RA---TAN", "DEC--TAN"]
    w.wcs.crval = [ra, dec]
    w.wcs.crpix = [(SIZE + 1) / 2, (SIZE + 1) / 2]
    w.wcs.cdelt = [-SCALE, SCALE]
    return w


def flux_for(snr):
    """Total flux whose aperture sum has this signal to noise on unit noise."""
    inside = 1 - math.exp(-APERTURE ** 2 / (2 * PSF ** 2))
    return snr * math.sqrt(math.pi * APERTURE ** 2) / inside


def generate(d, grid, n_sources, seed):
    d.mkdir(parents=True)
    rnd = np.random.default_rng(seed)
    # image centres on a grid, in the survey's own tangent plane around CENTER
    plane = wcs_at(*CENTER)
    half = (grid - 1) * STEP / 2
    images = []
    for i in range(grid):
        for j in range(grid):
            ra, dec = plane.wcs_pix2world([[(SIZE + 1) / 2 + i * STEP - half, (SIZE + 1) / 2 + j * STEP - half]], 1)[0]
            images.append((f"img_{i}_{j}", float(ra), float(dec)))
    # sources and blank positions inside the area every image row and column overlaps
    inner = half - SIZE / 2 + CUT + 2 if half > SIZE / 2 else 0
    span = max(half - inner, STEP)

    def spot():
        x, y = rnd.uniform(-span, span, 2) + (SIZE + 1) / 2
        ra, dec = plane.wcs_pix2world([[x, y]], 1)[0]
        return float(ra), float(dec)

    positions, truth = [], {}
    for k in range(n_sources):
        ra, dec = spot()
        positions.append((f"src{k:02d}", ra, dec))
        truth[f"src{k:02d}"] = "source"
    for k in range(n_sources):
        ra, dec = spot()
        positions.append((f"blank{k:02d}", ra, dec))
        truth[f"blank{k:02d}"] = "blank"
    flux = flux_for(SINGLE_SNR)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    (d / "images").mkdir()
    for name, ra, dec in images:
        w = wcs_at(ra, dec)
        data = np.random.default_rng([seed, zlib.crc32(name.encode())]).normal(0.0, 1.0, (SIZE, SIZE))
        for pid, pra, pdec in positions:
            if truth[pid] != "source":
                continue
            x, y = w.wcs_world2pix([[pra, pdec]], 0)[0]
            if -3 * PSF <= x < SIZE + 3 * PSF and -3 * PSF <= y < SIZE + 3 * PSF:
                data += flux / (2 * math.pi * PSF ** 2) * np.exp(-((xx - x) ** 2 + (yy - y) ** 2) / (2 * PSF ** 2))
        fits.PrimaryHDU(data.astype(np.float32), header=w.to_header()).writeto(d / "images" / f"{name}.fits")
    (d / "positions.txt").write_text("".join(f"{pid} {ra:.8f} {dec:.8f}\n" for pid, ra, dec in positions))
    (d / "truth.json").write_text(json.dumps(truth))
    (d / "bin").mkdir()
    shutil.copy(pathlib.Path(__file__), d / "bin" / "stacking.py")
    py = sys.executable
    tasks = [{"name": f"cut-{name}", "shell": f"{py} stacking.py cut image.fits positions.txt cutouts.fits",
              "inputs": [{"id": f"images/{name}.fits", "name": "image.fits"}, {"id": "positions.txt"},
                         {"id": "bin/stacking.py", "name": "stacking.py"}],
              "outputs": [{"path": "cutouts.fits", "id": f"cutouts/{name}.fits"}]}
             for name, _, _ in images]
    tasks.append({"name": "stack", "shell": f"{py} stacking.py stack cutouts stack.fits",
                  "inputs": [{"id": "bin/stacking.py", "name": "stacking.py"}]
                            + [{"id": f"cutouts/{name}.fits", "name": "cutouts/"} for name, _, _ in images],
                  "outputs": [{"path": "stack.fits", "id": "results/stack.fits"}]})
    (d / "workflow.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    print(f"{len(images)} images of {SIZE}x{SIZE} pixels, {n_sources} sources at signal to noise {SINGLE_SNR} "
          f"per image and {n_sources} blank positions, {len(tasks)} tasks in {d / 'workflow.jsonl'}")


def requests(d, n, store_url, seed):
    """AstroPortal's service load (seed 000 §4.4.6): n stacking requests over the same survey, each for
    a random half of the positions, so that every image is read by n cut tasks (locality n). With
    store_url the images are read from that HTTP store (a shared file system stand-in) rather than
    the local store root."""
    rnd = np.random.default_rng([seed, n])
    positions = (d / "positions.txt").read_text().splitlines()
    images = sorted(p.stem for p in (d / "images").glob("*.fits"))
    py = sys.executable
    tasks = []
    for r in range(n):
        chosen = sorted(rnd.choice(len(positions), size=max(1, len(positions) // 2), replace=False))
        (d / f"positions-{r}.txt").write_text("".join(positions[k] + "\n" for k in chosen))
        for name in images:
            source = f"{store_url}/images/{name}.fits" if store_url else f"images/{name}.fits"
            tasks.append({"name": f"cut-{r}-{name}", "shell": f"{py} stacking.py cut image.fits positions.txt c.fits",
                          "inputs": [{"id": f"images/{name}.fits", "source": source, "name": "image.fits"},
                                     {"id": f"positions-{r}.txt", "name": "positions.txt"},
                                     {"id": "bin/stacking.py", "name": "stacking.py"}],
                          "outputs": [{"path": "c.fits", "id": f"cutouts/{r}/{name}.fits", "temporary": True}]})
        tasks.append({"name": f"stack-{r}", "shell": f"{py} stacking.py stack cutouts stack.fits",
                      "inputs": [{"id": "bin/stacking.py", "name": "stacking.py"}]
                                + [{"id": f"cutouts/{r}/{name}.fits", "name": "cutouts/"} for name in images],
                      "outputs": [{"path": "stack.fits", "id": f"results/stack-{r}.fits"}]})
    (d / "requests.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    print(f"{n} stacking requests over {len(images)} images (each image read {n} times), {len(tasks)} tasks in "
          f"{d / 'requests.jsonl'}")


def read_positions(path):
    out = []
    for line in pathlib.Path(path).read_text().splitlines():
        pid, ra, dec = line.split()
        out.append((pid, float(ra), float(dec)))
    return out


def cut(image, positions, out):
    with fits.open(image) as hdul:
        data = hdul[0].data.astype(np.float64)
        w = WCS(hdul[0].header)
    hdus = [fits.PrimaryHDU()]
    for pid, ra, dec in read_positions(positions):
        x, y = w.wcs_world2pix([[ra, dec]], 0)[0]
        cx, cy = int(round(float(x))), int(round(float(y)))
        if CUT <= cx < data.shape[1] - CUT and CUT <= cy < data.shape[0] - CUT:
            hdus.append(fits.ImageHDU(data[cy - CUT:cy + CUT + 1, cx - CUT:cx + CUT + 1], name=pid))
    fits.HDUList(hdus).writeto(out)


def stack(cutouts, out):
    sums, counts = {}, {}
    for f in sorted(pathlib.Path(cutouts).iterdir()):
        with fits.open(f) as hdul:
            for h in hdul[1:]:
                pid = h.name.lower()
                sums[pid] = sums.get(pid, 0) + h.data
                counts[pid] = counts.get(pid, 0) + 1
    hdus = [fits.PrimaryHDU()]
    for pid in sorted(sums):
        h = fits.ImageHDU(sums[pid], name=pid)
        h.header["NIMAGES"] = counts[pid]
        hdus.append(h)
    fits.HDUList(hdus).writeto(out)


def serial(d):
    ref = d / "reference"
    (ref / "cutouts").mkdir(parents=True, exist_ok=True)
    for img in sorted((d / "images").glob("*.fits")):
        cut(img, d / "positions.txt", ref / "cutouts" / img.name)
    stack(ref / "cutouts", ref / "stack.fits")


def snr(data):
    """Aperture signal to noise at the centre, the noise measured from the cutout's outer pixels."""
    yy, xx = np.mgrid[0:data.shape[0], 0:data.shape[1]] - CUT
    r = np.hypot(xx, yy)
    inside = r <= APERTURE
    sigma = data[r > CUT - 3].std()
    return data[inside].sum() / (sigma * math.sqrt(inside.sum()))


def check(d):
    truth = json.loads((d / "truth.json").read_text())
    got, ref = d / "results" / "stack.fits", d / "reference" / "stack.fits"
    if not got.exists():
        die(f"no stacked result {got}")
    with fits.open(got) as a, fits.open(ref) as b:
        if [h.name for h in a] != [h.name for h in b]:
            die("the stacked positions differ from the serial reference's")
        for x, y in zip(a[1:], b[1:]):
            if x.header["NIMAGES"] != y.header["NIMAGES"] or not np.array_equal(x.data, y.data):
                die(f"position {x.name.lower()} differs from the serial reference")
        rows = [(h.name.lower(), h.header["NIMAGES"], snr(h.data)) for h in a[1:]]
    bad = []
    for pid, n, s in rows:
        expected = SINGLE_SNR * math.sqrt(n)
        # the noise of a measured signal to noise is about 1: within 3 of the expectation, and clear of
        # the noise once stacked over 9 images or more
        if truth[pid] == "source" and not (s >= expected - 3 and (n < 9 or s >= 3)):
            bad.append(f"{pid}: stacked over {n} images, signal to noise {s:.1f}, expected about {expected:.1f}")
        if truth[pid] == "blank" and abs(s) >= 3:
            bad.append(f"{pid}: a blank position stacked over {n} images reads {s:.1f}")
    sources = [(n, s) for pid, n, s in rows if truth[pid] == "source"]
    if not sources or max(n for n, _ in sources) < 9:
        bad.append("no source was covered by 9 images or more")
    if bad:
        die("; ".join(bad))
    gain = sum(s / SINGLE_SNR for _, s in sources) / sum(math.sqrt(n) for n, _ in sources)
    print(f"ok: the stack equals the serial reference; {len(sources)} sources stacked over "
          f"{min(n for n, _ in sources)}-{max(n for n, _ in sources)} images reach signal to noise "
          f"{min(s for _, s in sources):.1f}-{max(s for _, s in sources):.1f} ({gain:.2f} x sqrt(N) x the single "
          f"image's {SINGLE_SNR}); {len(rows) - len(sources)} blank positions stay below 3")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("dir", type=pathlib.Path)
    g.add_argument("--grid", type=int, default=6)
    g.add_argument("--sources", type=int, default=10)
    g.add_argument("--seed", type=int, default=3)
    q = sub.add_parser("requests")
    q.add_argument("dir", type=pathlib.Path)
    q.add_argument("--requests", type=int, default=4)
    q.add_argument("--store-url", default="", help="read the images from this HTTP store")
    q.add_argument("--seed", type=int, default=3)
    for name in ("serial", "check"):
        sub.add_parser(name).add_argument("dir", type=pathlib.Path)
    c = sub.add_parser("cut")
    c.add_argument("image")
    c.add_argument("positions")
    c.add_argument("out")
    s = sub.add_parser("stack")
    s.add_argument("cutouts")
    s.add_argument("out")
    a = ap.parse_args()
    if a.cmd == "generate":
        if a.dir.exists():
            die(f"{a.dir} exists: give a new directory")
        generate(a.dir, a.grid, a.sources, a.seed)
    elif a.cmd == "requests":
        requests(a.dir, a.requests, a.store_url.rstrip("/"), a.seed)
    elif a.cmd == "serial":
        serial(a.dir)
    elif a.cmd == "check":
        check(a.dir)
    elif a.cmd == "cut":
        cut(a.image, a.positions, a.out)
    else:
        stack(a.cutouts, a.out)


if __name__ == "__main__":
    main()
