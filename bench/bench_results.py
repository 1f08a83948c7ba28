"""Reading Shoal's merged benchmark result files (bench/run.sh writes them, bench/merge_results.py
builds them): one JSON object with the machine, the profile and each suite's Google Benchmark
output. Shared by bench/summary.py and bench/plot.py; standard library only.
"""
import json
import re


def load(path):
    with open(path) as f:
        return json.load(f)


def base_name(name):
    """'make/bytes:16/threads:1024/repeats:5/manual_time_median' -> 'make/bytes:16/threads:1024'.
    A fixed iteration count (Google Benchmark adds '/iterations:3' for ->Iterations(3)) is how it
    was run, not what it measures, and goes too."""
    name = re.sub(r"/iterations:\d+", "", name)
    name = re.sub(r"/repeats:\d+.*$", "", name)
    return re.sub(r"/(manual|real)_time.*$", "", name)


def rows(result, suite):
    """{benchmark name: {statistic: entry}} for a suite; statistic is 'median', 'min', 'max',
    'mean', ... for aggregates and 'single' for a run without repetitions."""
    out = {}
    for b in result.get("suites", {}).get(suite, {}).get("benchmarks", []):
        if b.get("error_occurred"):
            continue
        stat = b.get("aggregate_name", "single") if b.get("run_type") == "aggregate" else "single"
        out.setdefault(base_name(b.get("run_name", b["name"])), {})[stat] = b
    return out


def stat(entry, key, which="median"):
    """A field (real_time in the benchmark's time unit, or a counter) of one statistic, falling
    back to the single run; None when absent."""
    b = entry.get(which) or entry.get("single")
    if b is None:
        return None
    return b.get(key)


def micros(b):
    """A benchmark entry's real_time in microseconds."""
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b.get("time_unit", "ns")]
    return b["real_time"] * scale


def time_us(entry, which="median"):
    b = entry.get(which) or entry.get("single")
    return None if b is None else micros(b)


def params(name):
    """'make/bytes:16/threads:1024' -> ('make', {'bytes': '16', 'threads': '1024'})."""
    parts = name.split("/")
    kind, kv = [], {}
    for p in parts:
        if ":" in p:
            k, v = p.split(":", 1)
            kv[k] = v
        else:
            kind.append(p)
    return "/".join(kind), kv


def machine_label(result):
    m = result.get("machine", {})
    return m.get("gpu_name") or m.get("device") or "unknown device"
