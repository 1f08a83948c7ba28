#!/usr/bin/env python3
"""Markdown table of a shoal_bitmap_bench run.

Reads Google Benchmark JSON (--benchmark_out=x.json --benchmark_out_format=json) and prints
one row per (fill %, threads) with, for each claim variant, the median time, the claims per
second and the probes per claim (mean over threads / mean over warps of the warp maximum),
then the ratio of CoRW's time to RW-BM's (below 1: CoRW is faster).

Uses the "median" aggregates when the run reported them; otherwise the median over the
repetitions it finds. Python 3 standard library only.

    bench/bitmap_table.py results.json [more.json ...]
"""

import argparse
import json
import re
import statistics
import sys

VARIANTS = [("corw", "CoRW"), ("rwbm", "RW-BM"), ("linear", "linear")]
NAME = re.compile(r"^claim/(?P<variant>\w+)/fill_pct:(?P<fill>[\d.]+)/threads:(?P<threads>\d+)(/|$)")
TO_MICROSECONDS = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


def load_runs(paths):
    """Returns the context of the first file and {(fill, threads, variant): [run, ...]}."""
    context, runs, errors = None, {}, []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        context = context or doc.get("context", {})
        for b in doc.get("benchmarks", []):
            m = NAME.match(b.get("run_name", b["name"]))
            if not m:
                continue
            if b.get("error_occurred"):
                errors.append(f"{b['name']}: {b.get('error_message', 'error')}")
                continue
            key = (float(m["fill"]), int(m["threads"]), m["variant"])
            runs.setdefault(key, []).append(b)
    return context, runs, errors


def median_of(runs):
    """(time in µs, claims/s, probes mean, probes warp max) of one configuration."""
    medians = [r for r in runs if r.get("run_type") == "aggregate" and r.get("aggregate_name") == "median"]
    if medians:
        r = medians[0]
        pick = lambda key, scale=1.0: r[key] * scale
        return (pick("real_time", TO_MICROSECONDS[r["time_unit"]]), pick("claims_per_s"),
                pick("probes_mean"), pick("probes_warp_max"))
    reps = [r for r in runs if r.get("run_type", "iteration") == "iteration"]
    if not reps:
        return None
    med = lambda f: statistics.median(f(r) for r in reps)
    return (med(lambda r: r["real_time"] * TO_MICROSECONDS[r["time_unit"]]),
            med(lambda r: r["claims_per_s"]), med(lambda r: r["probes_mean"]),
            med(lambda r: r["probes_warp_max"]))


def fmt(x, digits=3):
    """`digits` significant digits, never in exponent notation (1190 rather than 1.19e+03)."""
    if x is None:
        return "–"
    if x == 0 or abs(x) >= 10 ** (digits - 1):
        return f"{x:.0f}"
    return f"{x:.{digits}g}"


def table(runs):
    present = [(v, label) for v, label in VARIANTS if any(k[2] == v for k in runs)]
    header = ["fill %", "threads"]
    for _, label in present:
        header += [f"{label} µs", f"{label} G/s", f"{label} probes mean / warp max"]
    header.append("CoRW vs RW-BM time ratio")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]

    configs = sorted({(fill, threads) for fill, threads, _ in runs}, key=lambda c: (-c[0], c[1]))
    for fill, threads in configs:
        row = [f"{fill:g}", str(threads)]
        times = {}
        for v, _ in present:
            m = median_of(runs.get((fill, threads, v), []))
            if m is None:
                row += ["–", "–", "–"]
                continue
            time_us, rate, mean, warp_max = m
            times[v] = time_us
            row += [fmt(time_us), fmt(rate / 1e9), f"{mean:.2f} / {warp_max:.2f}"]
        ratio = times["corw"] / times["rwbm"] if "corw" in times and "rwbm" in times else None
        row.append(fmt(ratio, 2))
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", nargs="+", help="Google Benchmark JSON output of shoal_bitmap_bench")
    args = parser.parse_args()

    context, runs, errors = load_runs(args.json)
    for e in errors:
        print(f"ERROR {e}", file=sys.stderr)
    if not runs:
        sys.exit("no successful claim/... benchmarks in " + ", ".join(args.json))
    device = context.get("shoal_device", "?")
    print(f"Backend `{context.get('shoal_backend', '?')}` on {device}; "
          f"warp width {context.get('shoal_warp_width', '?')}; {context.get('date', '')}")
    print()
    print("Probes: CoRW counts pooling rounds of the warp (each a full descent of the levels); "
          "RW-BM and linear count leaf words read.")
    print()
    print(table(runs))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
