#!/usr/bin/env python3
"""Merges the suites' Google Benchmark JSON files of one bench/run.sh into a result file.

Usage: bench/merge_results.py --out FILE [--nvidia-smi CSV] [--profile NAME] SUITE=JSON...

The result file holds {"format", "created", "git", "profile", "machine", "suites": {suite: the
suite's Google Benchmark output}}. When FILE exists (an earlier subset of the same day on the
same machine), its other suites are kept and the suites given here replace theirs. A JSON file
cut short by a time limit (the reporter writes the closing brackets last) is repaired by keeping
every complete benchmark entry, and the suite is marked "truncated".
"""
import argparse
import csv
import datetime
import json
import os
import subprocess
import sys

FORMAT = "shoal-bench-results/1"


def read_suite(path):
    with open(path) as f:
        text = f.read()
    try:
        return json.loads(text), False
    except json.JSONDecodeError:
        pass
    # Keep everything up to the last complete entry of the "benchmarks" array.
    start = text.find('"benchmarks"')
    if start < 0:
        raise ValueError(f"{path}: no benchmarks at all")
    end = text.rfind("\n    }")
    while end > start:
        candidate = text[: end + len("\n    }")] + "\n  ]\n}\n"
        try:
            return json.loads(candidate), True
        except json.JSONDecodeError:
            end = text.rfind("\n    }", 0, end)
    candidate = text[: text.find("[", start) + 1] + "]\n}\n"
    return json.loads(candidate), True


def nvidia_smi_facts(path):
    if not path or not os.path.exists(path):
        return {}
    with open(path) as f:
        lines = [l for l in f.read().splitlines() if l.strip()]
    if len(lines) < 2 or "," not in lines[0]:
        return {"nvidia_smi": lines[0] if lines else "no output"}
    header, first = next(csv.reader([lines[0]])), next(csv.reader([lines[1]]))
    return {"nvidia_smi." + h.strip(): v.strip() for h, v in zip(header, first)}


def git_facts():
    def git(*args):
        try:
            return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return None
    commit = git("rev-parse", "--short", "HEAD")
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(dirty)} if commit else {}


def machine_facts(suites, smi):
    """Device facts: the calibration suite's context (CUDA runtime view) and nvidia-smi's."""
    m = dict(smi)
    for name in ("calibrate", *suites):
        ctx = suites.get(name, {}).get("context", {})
        for k in ("shoal_backend", "shoal_device", "shoal_cpu_threads", "host_name", "num_cpus", "mhz_per_cpu"):
            if k in ctx and k not in m:
                m[k] = ctx[k]
        for k, v in ctx.items():
            if k.startswith(("gpu_", "cuda_")):
                m.setdefault(k, v)
    if "gpu_name" not in m and "nvidia_smi.name" in m:
        m["gpu_name"] = m["nvidia_smi.name"]
    m.setdefault("device", m.get("shoal_device"))
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--nvidia-smi")
    ap.add_argument("--profile", default="quick")
    ap.add_argument("suites", nargs="*", metavar="SUITE=JSON")
    a = ap.parse_args()

    result = {"format": FORMAT, "suites": {}}
    if os.path.exists(a.out):
        with open(a.out) as f:
            result = json.load(f)
        if result.get("format") != FORMAT:
            sys.exit(f"{a.out}: not a {FORMAT} file")
    new = {}
    for spec in a.suites:
        name, _, path = spec.partition("=")
        data, truncated = read_suite(path)
        data["truncated"] = truncated
        data["profile"] = a.profile
        new[name] = data
        errors = [b["name"] for b in data.get("benchmarks", []) if b.get("error_occurred")]
        print(f"{name}: {len(data.get('benchmarks', []))} entries" + (", TRUNCATED" if truncated else "") +
              (f", {len(errors)} with errors" if errors else ""))
    result["suites"].update(new)
    result["created"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    result["git"] = git_facts()
    result["profile"] = a.profile
    result["machine"] = machine_facts(result["suites"], nvidia_smi_facts(a.nvidia_smi))
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    print(f"wrote {a.out} (suites: {', '.join(sorted(result['suites']))})")


if __name__ == "__main__":
    main()
