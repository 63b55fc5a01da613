#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Samples per symbol of a perf.data, most first: what
`perfring report --no-children --sort sym -n` counts, from Python.

    python3 examples/count_symbols.py [perf.data] [--comm NAME]
"""
import argparse
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import perfring  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input", nargs="?", default="perf.data")
    ap.add_argument("--comm", help="only these threads' samples (a,b)")
    ap.add_argument("--event", help="only this event's samples")
    args = ap.parse_args()
    counts = collections.Counter()

    def on_sample(s):
        if args.event is None or s.event == args.event:
            counts[s.ip.sym or "[unknown]"] += 1

    with perfring.Reader(args.input, comm=args.comm, callchain=False) as r:
        r.run(on_sample)
    total = sum(counts.values())
    for sym, n in counts.most_common():
        print("%8d %6.2f%%  %s" % (n, 100.0 * n / total, sym))


if __name__ == "__main__":
    main()
