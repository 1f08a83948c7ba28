#!/usr/bin/env python3
"""Shoal against the reference allocator prototype (alloc-proto/proto.cu) on its four workloads:
a markdown table from a shoal_heap_bench JSON file and a log of the prototype's run.sh.

Usage: bench/proto_compare.py SHOAL.json PROTO.log [--design 4] [--where KEY=VALUE]...
  (scripts/proto-compare.sh runs it)

SHOAL.json   Google Benchmark --benchmark_out JSON of shoal_heap_bench holding the proto_W*
             benchmarks (bench/heap_workloads_bench.cpp), or a merged result file of bench/run.sh
             (every suite in it is searched).
PROTO.log    the prototype's stdout: one line per run, "RES D<d> W<w> n=<threads> ... key=value ...",
             W1/W2/W4 with t_us (median kernel µs) and Gps, W3 with alloc_us (median birth kernel
             µs over the rounds), allocs_per_iter and Gps; a run that failed is
             "RES D<d> W=<w> logn=<k> EXIT=<status>" (run.sh). Other lines are ignored.
--design     which of the prototype's designs to compare with (default 4: D4, the per-SM stock)
--where      keep only RES lines with this key=value (e.g. prime=0), repeatable; where several
             lines remain for one workload, the median of their times is used

Rows are matched by workload and thread count (proto_W1_one_lane/20 is "RES ... W1 n=1048576").
Shoal's cell: W1/W2/W4 G allocations/s = objects / median kernel time (objects: n/32, n, n/8 of
the threads counter, as the prototype counts them) with that time in µs; W3 the median over
repetitions of the rounds' median birth kernel (counter round_median_us) in µs. The ratio is
Shoal's time over the prototype's (> 1: Shoal is slower). Standard library only. Exits 1 when the
JSON holds no proto_W* benchmark or one of them reported an error.
"""
import argparse
import json
import math
import re
import statistics
import sys

from bench_results import base_name, micros

# (workload, label, objects per thread): the prototype's order.
WORKLOADS = {
    1: ("W1 one lane per warp", 1 / 32),
    2: ("W2 every lane", 1.0),
    4: ("W4 two classes, 1 lane in 8", 1 / 8),
    3: ("W3 births in holes (birth kernel)", None),
}
ORDER = [1, 2, 4, 3]
SHOAL_NAME = re.compile(r"^proto_W(\d)_[a-z_]+(?:/(\d+))?$")


def num(x, digits=3):
    if x is None:
        return "–"
    if abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.{digits}g}"


def pow2(n):
    n = int(n)
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else f"{n:,}"


# ---------------------------------------------------------------- Shoal's JSON
def shoal_benchmarks(path):
    """[(benchmark entry, device)] of every proto_W* entry in a Google Benchmark or merged file."""
    with open(path) as f:
        data = json.load(f)
    if "suites" in data:  # bench/run.sh's merged file
        out = []
        for suite in data["suites"].values():
            dev = suite.get("context", {}).get("shoal_device")
            out += [(b, dev) for b in suite.get("benchmarks", [])]
        return out
    dev = data.get("context", {}).get("shoal_device")
    return [(b, dev) for b in data.get("benchmarks", [])]


def shoal_results(path):
    """{(workload, threads): {'us': µs, 'gps': G/s or None, 'err': message or None}}, device, failed."""
    runs, device, failed = {}, None, False
    for b, dev in shoal_benchmarks(path):
        name = base_name(b.get("run_name", b["name"]))
        m = SHOAL_NAME.match(name)
        if not m:
            continue
        device = device or dev
        w = int(m.group(1))
        r = runs.setdefault((w, name), {"median": None, "single": [], "err": None})
        if b.get("error_occurred"):
            failed = True
            r["err"] = b.get("error_message", "error")
            print(f"error in {b['name']}: {r['err']}", file=sys.stderr)
            continue
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                r["median"] = b
        else:
            r["single"].append(b)
    out = {}
    for (w, name), r in runs.items():
        m = SHOAL_NAME.match(name)
        rows = [r["median"]] if r["median"] else r["single"]
        threads = next((b["threads"] for b in rows if "threads" in b), None)
        if threads is None and m.group(2):
            threads = 2 ** int(m.group(2))
        if threads is None or w not in WORKLOADS:
            continue
        threads = int(round(threads))
        cell = {"err": r["err"], "us": None, "gps": None, "name": name}
        if rows:
            # Without the median aggregate (no repetitions, or the per-repetition rows): the median of the rows.
            if w == 3:
                times = [b["round_median_us"] if "round_median_us" in b else micros(b) for b in rows]
                births = [b["births_per_round"] for b in rows if "births_per_round" in b]
            else:
                times = [micros(b) for b in rows]
            cell["us"] = statistics.median(times)
            if w == 3:
                if births and cell["us"]:
                    cell["gps"] = statistics.median(births) / cell["us"] / 1e3
            elif cell["us"]:
                cell["gps"] = threads * WORKLOADS[w][1] / cell["us"] / 1e3
        out[(w, threads)] = cell
    return out, device, failed


# ---------------------------------------------------------------- the prototype's log
RES = re.compile(r"^RES D(\d+) ")
KV = re.compile(r"(\w+)=(\S+)")


def proto_results(path, design, where):
    """{(workload, threads): {'us', 'gps', 'runs', 'err'}}, the GPU line of run.sh (or None)."""
    found, gpu = {}, None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            if gpu is None and "NVIDIA" in line and not line.startswith("RES"):
                gpu = line
            m = RES.match(line)
            if not m or int(m.group(1)) != design:
                continue
            kv = dict(KV.findall(line))
            wm = re.match(r"^RES D\d+ W(\d+) ", line)
            if wm:
                w = int(wm.group(1))
            elif "W" in kv:  # run.sh's failure line: "RES D4 W=1 logn=20 EXIT=124"
                w = int(kv["W"])
            else:
                continue
            if "EXIT" not in kv and any(kv.get(k) != v for k, v in where):
                continue  # (a failure line has no fields to select by)
            if "n" in kv:
                n = int(kv["n"])
            elif w == 3:
                n = 1 << 22  # proto.cu: W3 is always 4 M threads
            else:
                n = 1 << int(kv.get("logn", 20))
            cell = found.setdefault((w, n), {"us": [], "gps": [], "objs": [], "err": None})
            if "EXIT" in kv:
                cell["err"] = f"exit {kv['EXIT']}"
                continue
            t = kv.get("alloc_us" if w == 3 else "t_us")
            if t is None:
                cell["err"] = "no time in its RES line"
                continue
            cell["us"].append(float(t))
            if "Gps" in kv:
                cell["gps"].append(float(kv["Gps"]))
            objs = kv.get("allocs_per_iter" if w == 3 else "objs")
            if objs is not None:
                cell["objs"].append(float(objs))
            if "FAILED" in line.split("CHECK", 1)[-1] and "CHECK" in line:
                cell["err"] = "CHECK FAILED"
    out = {}
    for key, c in found.items():
        us = statistics.median(c["us"]) if c["us"] else None
        gps = statistics.median(c["gps"]) if c["gps"] else None
        if us and len(c["objs"]) == len(c["us"]):  # the rate of the median time, as Shoal's cell
            gps = statistics.median(c["objs"]) / us / 1e3
        out[key] = {
            "us": us,
            "gps": gps,
            "runs": len(c["us"]),
            "err": c["err"],
        }
    return out, gpu


# ---------------------------------------------------------------- the table
def cell_text(c, w):
    if c is None:
        return "–"
    if c.get("us") is None:
        return c.get("err") or "–"
    if w == 3:
        text = f"{num(c['us'])} µs"
        if c.get("gps") is not None:
            text += f" ({num(c['gps'])} G/s)"
    else:
        text = f"{num(c['gps'])} G/s ({num(c['us'])} µs)"
    if c.get("runs", 1) > 1:
        text += f", median of {c['runs']}"
    if c.get("err"):
        text += f" [{c['err']}]"
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shoal_json")
    ap.add_argument("proto_log")
    ap.add_argument("--design", type=int, default=4, help="the prototype's design number (default 4)")
    ap.add_argument("--where", action="append", default=[], metavar="KEY=VALUE",
                    help="keep only RES lines with this field value (repeatable)")
    args = ap.parse_args(argv)
    where = []
    for w in args.where:
        if "=" not in w:
            ap.error(f"--where {w}: want KEY=VALUE")
        where.append(tuple(w.split("=", 1)))

    shoal, device, failed = shoal_results(args.shoal_json)
    if not shoal and not failed:
        print(f"{args.shoal_json}: no proto_W* benchmark (run shoal_heap_bench --benchmark_filter=proto_W)",
              file=sys.stderr)
        return 1
    proto, gpu = proto_results(args.proto_log, args.design, where)
    d = f"D{args.design}"

    print(f"Shoal: {args.shoal_json} ({device or 'device not recorded'}); prototype {d}: {args.proto_log}"
          f" ({gpu or 'GPU not recorded'})\n")
    print(f"| workload | Shoal | prototype {d} | Shoal time / {d} time |")
    print("|---|---|---|---|")
    keys = sorted(set(shoal) | set(proto), key=lambda k: (ORDER.index(k[0]) if k[0] in ORDER else 9, k[1]))
    unmatched = 0
    for w, n in keys:
        s, p = shoal.get((w, n)), proto.get((w, n))
        label = WORKLOADS.get(w, (f"W{w}", None))[0]
        ratio = "–"
        if s and p and s.get("us") and p.get("us"):
            ratio = f"{s['us'] / p['us']:.2f}"
        elif not (s and p):
            unmatched += 1
        print(f"| {label}, {pow2(n)} threads | {cell_text(s, w)} | {cell_text(p, w)} | {ratio} |")
    if unmatched:
        print(f"\n{unmatched} row(s) have no counterpart (other thread counts: a cpu run, or a prototype "
              "run with other sizes).")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
