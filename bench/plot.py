#!/usr/bin/env python3
"""PNG charts from a merged result file (bench/run.sh): allocator throughput vs threads per object
size (log-log, with CUDA malloc and the bump allocator), the fill-level sweep, and each app's
time per step against its static SOA and AOS baselines.

Usage: bench/plot.py RESULT.json [--out DIR]   (default DIR: docs/bench)
Writes <tag>-alloc-throughput.png, <tag>-alloc-fill.png, <tag>-apps.png, where <tag> is the
result file's name without .json (e.g. h100-80gb-hbm3-2026-11-22); a chart whose suite is not in
the file is skipped. Needs matplotlib (Debian: python3-matplotlib).
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display on build and GPU machines
import matplotlib.pyplot as plt  # noqa: E402

from bench_results import load, machine_label, params, rows, stat, time_us  # noqa: E402


def rate_g(entry, which="median"):
    v = stat(entry, "objects_per_s", which)
    return None if v is None else v / 1e9


def error_bars(entries, value):
    """Lower and upper distances from the median to min and max (0 where absent)."""
    lo, hi = [], []
    for e in entries:
        m, a, b = value(e, "median"), value(e, "min"), value(e, "max")
        if a is None or b is None or m is None:
            lo.append(0), hi.append(0)
        else:
            a, b = min(a, b), max(a, b)
            lo.append(max(0.0, m - a)), hi.append(max(0.0, b - m))
    return [lo, hi]


def plot_throughput(res, path):
    """One panel per object size: Shoal per thread and per warp, CUDA malloc, and the bump
    allocator (16-byte objects, the ceiling) in every panel."""
    r = rows(res, "alloc")
    series = {}
    for name, e in r.items():
        kind, p = params(name)
        if kind in ("make", "make_per_warp", "cuda_malloc", "bump") and "threads" in p:
            series.setdefault((kind, int(p["bytes"])), []).append((int(p["threads"]), e))
    sizes = sorted({b for (k, b) in series if k != "bump"})
    if not sizes:
        return False
    cols = 2 if len(sizes) > 1 else 1
    rows_n = (len(sizes) + cols - 1) // cols
    fig, axes = plt.subplots(rows_n, cols, figsize=(5.2 * cols, 3.9 * rows_n), squeeze=False, sharey=True)
    style = {"make": ("-", "tab:blue", "Shoal make"), "make_per_warp": (":", "tab:purple", "Shoal make, one per warp"),
             "cuda_malloc": ("--", "tab:red", "CUDA malloc"), "bump": ("-.", "black", "bump allocator (16 B)")}
    for ax, size in zip([a for row in axes for a in row], sizes):
        for kind in ("bump", "make", "make_per_warp", "cuda_malloc"):
            pts = sorted(series.get((kind, 16 if kind == "bump" else size), []))
            if not pts:
                continue
            line, colour, label = style[kind]
            ax.errorbar([t for t, _ in pts], [rate_g(e) for _, e in pts], yerr=error_bars([e for _, e in pts], rate_g),
                        linestyle=line, color=colour, marker="o", markersize=3, capsize=2, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{size}-byte objects", fontsize=10)
        ax.set_xlabel("requests (threads, or warps for one per warp)")
        ax.set_ylabel("objects per second (G/s)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    for ax in [a for row in axes for a in row][len(sizes):]:
        ax.set_visible(False)
    fig.suptitle(f"Allocation throughput — {machine_label(res)}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def plot_fill(res, path):
    """Throughput against the share of free slots, and beside it the rounds per request (mean
    and warp maximum) from the probes suite when the file has it."""
    r = rows(res, "alloc")
    pts = sorted((float(params(n)[1]["free_pct"]), e) for n, e in r.items() if n.startswith("make_when_full/"))
    if not pts:
        return False
    probes = sorted((float(params(n)[1]["free_pct"]), e) for n, e in rows(res, "probes").items())
    fig, axes = plt.subplots(1, 2 if probes else 1, figsize=(11 if probes else 6.5, 4.5), squeeze=False)
    ax = axes[0][0]
    ax.errorbar([p for p, _ in pts], [rate_g(e) for _, e in pts], yerr=error_bars([e for _, e in pts], rate_g),
                marker="o", capsize=3)
    ax.set_ylabel("make throughput (G objects/s)")
    if probes:
        pa = axes[0][1]
        xs = [p for p, _ in probes]
        pa.plot(xs, [stat(e, "probes_mean") for _, e in probes], marker="o", label="mean over requests")
        pa.plot(xs, [stat(e, "probes_warp_max_mean") for _, e in probes], marker="s", linestyle="--",
                label="mean over warps of the warp's largest")
        pa.set_ylabel("rounds per request")
        top = max(stat(e, "probes_warp_max_mean") or 0 for _, e in probes)
        pa.set_ylim(0, 1.15 * top if top > 0 else 1)  # from zero: small differences stay small
        pa.legend(fontsize=8)
    ticks = [p for p, _ in pts]
    for a in axes[0]:
        a.set_xscale("log")
        a.set_xticks(ticks, [f"{t:g}" for t in ticks])
        a.minorticks_off()
        a.invert_xaxis()  # fuller heaps to the right
        a.set_xlabel("slots free when the requests start (%)")
        a.grid(True, which="both", alpha=0.3)
    fig.suptitle(f"Allocation on a nearly full heap — {machine_label(res)}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def ms_per_step(e, which="median"):
    t, steps = time_us(e, which), stat(e, "steps", which)
    return None if t is None or not steps else t / steps / 1e3


def plot_apps(res, path):
    table = {}
    for name, e in rows(res, "apps").items():
        app, variant, size = name.split("/")[:3]
        table.setdefault(app, {}).setdefault(size.split(":")[1], {})[variant] = e
    if not table:
        return False
    apps = sorted(table)
    fig, axes = plt.subplots(1, len(apps), figsize=(4.2 * len(apps), 4.2), squeeze=False)
    variants = [("shoal", "Shoal", "tab:blue"), ("soa", "static SOA", "tab:green"), ("aos", "static AOS", "tab:gray")]
    for ax, app in zip(axes[0], apps):
        sizes = sorted(table[app], key=lambda s: int(s.split("x")[0]))
        width = 0.8 / len(variants)
        for k, (v, label, colour) in enumerate(variants):
            es = [table[app][s].get(v) for s in sizes]
            xs = [i + (k - 1) * width for i, e in enumerate(es) if e]
            present = [e for e in es if e]
            if not present:
                continue
            ax.bar(xs, [ms_per_step(e) for e in present], width, label=label, color=colour,
                   yerr=error_bars(present, ms_per_step), capsize=2)
        ax.set_xticks(range(len(sizes)))
        ax.set_xticklabels(sizes, fontsize=8)
        ax.set_yscale("log")
        ax.set_title(app)
        ax.set_ylabel("ms per step")
        ax.grid(True, axis="y", which="both", alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"Apps against static baselines — {machine_label(res)}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("result")
    ap.add_argument("--out", default="docs/bench")
    a = ap.parse_args()
    res = load(a.result)
    tag = os.path.splitext(os.path.basename(a.result))[0]
    os.makedirs(a.out, exist_ok=True)
    wrote = []
    for suffix, fn in (("alloc-throughput", plot_throughput), ("alloc-fill", plot_fill), ("apps", plot_apps)):
        path = os.path.join(a.out, f"{tag}-{suffix}.png")
        if fn(res, path):
            wrote.append(path)
    for p in wrote:
        print(f"wrote {p}")
    if not wrote:
        print("no chart: the file holds none of the alloc and apps suites", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
