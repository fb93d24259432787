#!/usr/bin/env python3
"""Derive a steady cellular capacity trace from a recorded Mahimahi trace.

    scripts/derive_cellular_trace.py SRC FROM_MS TO_MS MBIT OUT

Keeps the recording's millisecond structure (which milliseconds carry
delivery opportunities, and how many: the radio scheduler's grants, gaps
and bursts) and removes its slow drift, then sets the mean rate:

1. take the opportunities of SRC in [FROM_MS, TO_MS), as counts per ms;
2. scale each 1-second block so that it carries exactly MBIT x 1 s of
   1500-byte opportunities (a block's shape stays, its total is fixed);
3. round the scaled counts to whole opportunities by error diffusion
   (the remainder carries into the next ms), so no block gains or loses
   more than one opportunity against its exact total;
4. write them as a Mahimahi trace starting at ms 1 and ending at the
   segment's length, so it loops with that period.

A millisecond that had no opportunity keeps none: the gaps, which are what
a small packet waits for, stay as recorded. Deterministic: the same
arguments always give the same file. traces/README.md lists the files made
with it and their arguments.
"""

import sys

BLOCK_MS = 1000
OPPORTUNITY_BITS = 1500 * 8


def read_counts(path: str, lo: int, hi: int) -> list[int]:
    counts = [0] * (hi - lo)
    with open(path) as f:
        for n, line in enumerate(f, 1):
            t = int(line)
            if lo <= t < hi:
                counts[t - lo] += 1
    return counts


def derive(counts: list[int], mbit: float) -> list[int]:
    per_block = mbit * 1e6 * BLOCK_MS / 1000 / OPPORTUNITY_BITS
    out, carry = [], 0.0
    for b in range(0, len(counts), BLOCK_MS):
        block = counts[b:b + BLOCK_MS]
        total = sum(block)
        if total == 0:
            raise SystemExit(f"block at +{b} ms has no opportunity: pick another segment")
        scale = per_block * len(block) / BLOCK_MS / total
        for c in block:
            exact = c * scale + carry
            k = int(exact + 0.5) if c else 0
            carry = exact - k if c else carry
            out.append(k)
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 6:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    src, lo, hi, mbit, dst = argv[1], int(argv[2]), int(argv[3]), float(argv[4]), argv[5]
    if not 0 <= lo < hi or (hi - lo) % BLOCK_MS:
        print("FROM_MS < TO_MS, and the segment a whole number of seconds", file=sys.stderr)
        return 2
    counts = derive(read_counts(src, lo, hi), mbit)
    with open(dst, "w") as f:
        for ms, k in enumerate(counts, 1):
            f.write(f"{ms}\n" * k)
        if counts[-1] == 0:
            f.write(f"{len(counts)}\n")   # the period is the last line: keep it at the segment's end
    lines = sum(counts) + (counts[-1] == 0)
    print(f"{dst}: {lines} opportunities over {len(counts)} ms = "
          f"{lines * OPPORTUNITY_BITS / len(counts) / 1e3:.2f} Mbit/s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
