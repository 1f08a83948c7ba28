#!/usr/bin/env python3
"""Draws an app's CSV time series (--csv FILE of wator, traffic, nbody, ...) to a PNG.

    scripts/plot_run.py wator.csv                      # every column against `step` -> wator.png
    scripts/plot_run.py wator.csv --columns fish sharks --out populations.png --title "Wa-Tor"
    scripts/plot_run.py traffic.csv --log               # a logarithmic y axis

The first column is the x axis (the apps write `step`). Columns that are not plain quantities
(a checksum such as `state_hash`) are left out unless named with --columns. Needs matplotlib
(Debian: python3-matplotlib). A file that is not such a CSV gets one line on stderr and exit 2.
"""

import argparse
import csv
import math
import sys

# Columns that identify a state rather than measure it: plotting them says nothing.
NOT_QUANTITIES = {"state_hash", "checksum", "hash"}


def fail(message):
    print(f"plot_run.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_series(path):
    """The CSV as (header, rows of floats); every row must have the header's width."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    if len(rows) < 2:
        fail(f"{path}: needs a header line and at least one row")
    header = [h.strip() for h in rows[0]]
    if len(header) < 2:
        fail(f"{path}: needs an x column and at least one more")
    values = []
    for n, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            fail(f"{path}:{n}: {len(row)} fields, the header has {len(header)}")
        try:
            parsed = [float(v) for v in row]
        except ValueError:
            fail(f"{path}:{n}: not a number in {row}")
        if not all(math.isfinite(v) for v in parsed):
            fail(f"{path}:{n}: not a finite number in {row}")
        values.append(parsed)
    return header, values


def main(argv=None):
    p = argparse.ArgumentParser(description="Draw an app's CSV time series to a PNG.")
    p.add_argument("csv", help="the file an app wrote with --csv")
    p.add_argument("--columns", nargs="+", help="columns to draw (default: every quantity)")
    p.add_argument("--out", help="PNG to write (default: the CSV's name with .png)")
    p.add_argument("--title", help="the chart's title (default: the CSV's name)")
    p.add_argument("--log", action="store_true", help="logarithmic y axis")
    a = p.parse_args(argv)

    header, rows = read_series(a.csv)
    x_name = header[0]
    wanted = a.columns or [h for h in header[1:] if h not in NOT_QUANTITIES]
    for c in wanted:
        if c not in header[1:]:
            fail(f"--columns: no column '{c}' in {a.csv} (it has {', '.join(header[1:])})")
    if not wanted:
        fail(f"{a.csv}: no column to draw")
    out = a.out or (a.csv[:-4] if a.csv.endswith(".csv") else a.csv) + ".png"

    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        fail("needs matplotlib (Debian: python3-matplotlib)")

    xs = [r[0] for r in rows]
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    for c in wanted:
        k = header.index(c)
        ax.plot(xs, [r[k] for r in rows], label=c, linewidth=1.5)
    ax.set_xlabel(x_name)
    ax.set_title(a.title or a.csv)
    if a.log:
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    try:
        fig.savefig(out)
    except OSError as e:
        fail(f"--out {out}: {e.strerror}")
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
