#!/usr/bin/env python3
"""Markdown tables from a shoal_heap_bench JSON file (Google Benchmark format).

Usage: bench/heap_table.py RESULT.json
Prints: make/destroy throughput by threads and size with the CUDA malloc and bump columns,
the fill-level sweep, churn and time to nullptr. Uses the median aggregate (or the single run).
Standard library only; exits 1 if any benchmark reported an error.
"""
import json
import re
import sys
from collections import defaultdict


def load(path):
    with open(path) as f:
        data = json.load(f)
    rows, failed = {}, False
    for b in data["benchmarks"]:
        if b.get("error_occurred"):
            failed = True
            print(f"error in {b['name']}: {b.get('error_message')}", file=sys.stderr)
            continue
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = re.sub(r"/repeats:\d+.*$", "", b["name"])
        name = re.sub(r"/manual_time.*$", "", name)
        rows[name] = b
    return data.get("context", {}), rows, failed


def rate(b):
    return b.get("objects_per_s", 0.0) / 1e9


def main():
    context, rows, failed = load(sys.argv[1])
    print(f"Device: {context.get('shoal_device', '?')}\n")
    by = defaultdict(dict)
    for name, b in rows.items():
        m = re.match(r"(make|destroy|bump|cuda_malloc|cuda_free)/bytes:(\d+)/threads:(\d+)", name)
        if m:
            by[(int(m.group(3)), int(m.group(2)))][m.group(1)] = b
    print("| threads | bytes | make G/s | destroy G/s | CUDA malloc G/s | CUDA free G/s | make ÷ malloc | bump G/s |")
    print("|---|---|---|---|---|---|---|---|")
    for (threads, size), cols in sorted(by.items()):
        if "make" not in cols:
            continue
        def g(k):
            return f"{rate(cols[k]):.3g}" if k in cols else "–"
        ratio = f"{rate(cols['make']) / rate(cols['cuda_malloc']):.0f}×" if "cuda_malloc" in cols else "–"
        print(f"| 2^{threads.bit_length() - 1} | {size} | {g('make')} | {g('destroy')} | {g('cuda_malloc')} | "
              f"{g('cuda_free')} | {ratio} | {g('bump')} |")
    print("\n| make when slots free | requests | time µs | G/s |")
    print("|---|---|---|---|")
    for name, b in rows.items():
        m = re.match(r"make_when_full/free_pct:([\d.]+)", name)
        if m:
            print(f"| {m.group(1)}% | {b.get('requests', 0):.0f} | {b['real_time']:.1f} | {rate(b):.3g} |")
    for name, b in rows.items():
        if name.startswith("churn"):
            print(f"\nChurn ({name}): {b['real_time']:.0f} µs per round (free a random half, refill), "
                  f"{rate(b):.3g} G objects/s, blocks in use ÷ minimum = {b.get('blocks_over_minimum', 0):.4f}")
        if name.startswith("time_to_nullptr"):
            print(f"\nTime to nullptr on a full heap ({b.get('requests', 0):.0f} requests): {b['real_time']:.1f} µs")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
