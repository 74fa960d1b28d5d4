#!/usr/bin/env python3
"""Seeded input for the variant-calling workflow: a random reference genome and, per sample,
single-end reads drawn from that genome with the sample's own SNPs (heterozygous or homozygous)
and sequencing errors. Same seed, same bytes.

Usage: make_data.py OUT_DIR [--samples 8] [--genome 200000] [--coverage 20] [--seed 7]
Writes OUT_DIR/genome.fa and OUT_DIR/samples/S0.fastq ...
"""

import argparse
import os
import random

BASES = "ACGT"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--genome", type=int, default=200_000, help="reference length (bases)")
    ap.add_argument("--coverage", type=int, default=20)
    ap.add_argument("--read-length", type=int, default=100)
    ap.add_argument("--snps", type=int, default=300, help="variable sites in the population")
    ap.add_argument("--error-rate", type=float, default=0.002)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    genome = "".join(rng.choice(BASES) for _ in range(args.genome))
    os.makedirs(os.path.join(args.out, "samples"), exist_ok=True)
    with open(os.path.join(args.out, "genome.fa"), "w") as f:
        f.write(">chr1\n")
        for i in range(0, len(genome), 60):
            f.write(genome[i:i + 60] + "\n")
    sites = sorted(rng.sample(range(args.read_length, args.genome - args.read_length), args.snps))
    alts = {s: rng.choice([b for b in BASES if b != genome[s]]) for s in sites}
    reads = args.genome * args.coverage // args.read_length
    quality = "I" * args.read_length
    for n in range(args.samples):
        # each sample carries each site on 0, 1 or 2 of its two haplotypes
        haplotypes = []
        dosage = {s: rng.choice((0, 0, 1, 2)) for s in sites}
        for h in range(2):
            seq = list(genome)
            for s in sites:
                if dosage[s] == 2 or (dosage[s] == 1 and h == 0):
                    seq[s] = alts[s]
            haplotypes.append("".join(seq))
        with open(os.path.join(args.out, "samples", f"S{n}.fastq"), "w") as f:
            for r in range(reads):
                hap = haplotypes[rng.randrange(2)]
                start = rng.randrange(0, args.genome - args.read_length)
                read = list(hap[start:start + args.read_length])
                for i in range(len(read)):
                    if rng.random() < args.error_rate:
                        read[i] = rng.choice([b for b in BASES if b != read[i]])
                f.write(f"@S{n}_{r}\n{''.join(read)}\n+\n{quality}\n")


if __name__ == "__main__":
    main()
