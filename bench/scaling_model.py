#!/usr/bin/env python3
"""A projection of the MPI programs' scaling to 8, 64 and 512 GPUs from a measured run of
bench/scaling.py (its --out file), and a chart of measured and projected speed-up.

    python3 bench/scaling_model.py SCALING.json [--gpus 8 64 512] [--chart FILE.png]

The model, from the per-phase times that --timing gives (rank 0's, the populate phase left out):
a run on P GPUs takes T(P) = T(1) / P + O(P), the work of one GPU divided over P plus an overhead
O(P) = T(P) - T(1) / P (weak scaling: T(P) - T(1) × the work per GPU, which n-body's
all-pairs forces multiply by P), which holds every exchange (halo, claims, migration, occupancy, gathers,
reductions) and any imbalance. The programs split the domain into bands of rows (Wa-Tor), strips
of the unit square (traffic) or ranges of bodies (n-body): a band keeps two neighbours and a
border of the grid's width at every P, and n-body's gather brings every body to every rank at
every P, so what a rank sends and receives per step does not shrink as P grows (the partition's
surface does not shrink with its volume). The projection therefore keeps the overhead measured
at the largest P of the file: T(P') = T(1) / P' + O(P_max), and for weak scaling efficiency
T(1) w / (T(1) w + O(P_max)), w the work per GPU (n-body's weak overhead times P / P_max: every
rank gathers all bodies, P times one GPU's). Optimistic beyond one node: exchanges between
hosts cost more than over NVLink, and reductions grow as log P. Pessimistic where the band
program would be replaced by tiles (a border that shrinks as 1/sqrt(P)).

Prints one table per transport: the measured speed-ups (strong) and efficiencies (weak), then
the projected ones, labelled as such.
"""
import argparse
import json
import sys
from collections import defaultdict

SETUP = {"populate"}  # once per run, not per step


def work_per_gpu(app, mode, ranks):
    """Each GPU's share of the work at `ranks` GPUs, one GPU's run = 1. Weak scaling keeps the
    objects per GPU, and n-body's work grows as the square of its bodies (P times per GPU)."""
    if mode == "strong":
        return 1.0 / ranks
    return float(ranks) if app == "nbody" else 1.0


def step_ms(run):
    return sum(ms for phase, ms in run["phases_ms"].items() if phase not in SETUP)


def overheads(run, one, divisor):
    """Per phase: what it took beyond one rank's time of the phase / divisor (ms over the run)."""
    return {p: run["phases_ms"].get(p, 0.0) - one["phases_ms"].get(p, 0.0) / divisor
            for p in run["phases_ms"] if p not in SETUP}


def label(run):
    size = run["size"]
    s = "x".join(map(str, size)) if isinstance(size, list) else f"{size:,}"
    return f"{run['app']} {run['mode']} {s}" + (" per GPU" if run["mode"] == "weak" else "")


def series(runs):
    """(app, mode, base size, transport) -> {ranks: run}, with one rank's run under every transport."""
    out = defaultdict(dict)
    for r in runs:
        key_size = tuple(r["size"]) if isinstance(r["size"], list) else r["size"]
        if r["mode"] == "weak":  # weak sizes grow with the ranks: key on one rank's size
            key_size = None
        out[(r["app"], r["mode"], key_size, r["transport"])][r["ranks"]] = r
    for (app, mode, size, transport), by in list(out.items()):
        if transport != "host" and 1 not in by and (app, mode, size, "host") in out:
            by[1] = out[(app, mode, size, "host")].get(1)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", help="bench/scaling.py --out file")
    ap.add_argument("--gpus", type=int, nargs="+", default=[8, 64, 512])
    ap.add_argument("--chart", help="write a PNG chart of measured and projected speed-ups here")
    a = ap.parse_args()
    try:
        with open(a.results) as f:
            runs = json.load(f)
        if not isinstance(runs, list) or not all(isinstance(r, dict) and "phases_ms" in r for r in runs):
            raise ValueError("not a list of bench/scaling.py runs")
    except (OSError, ValueError) as e:
        print(f"scaling_model.py: {a.results}: {e}", file=sys.stderr)
        return 2

    rows = []
    for (app, mode, _, transport), by in sorted(series(runs).items(), key=lambda kv: (kv[0][3], kv[0][0], kv[0][1])):
        one = by.get(1)
        if one is None or len(by) < 2:
            continue
        t1 = step_ms(one)
        pmax = max(by)
        share = lambda p: work_per_gpu(app, mode, p)  # noqa: E731
        over = step_ms(by[pmax]) - t1 * share(pmax)
        worst = max(overheads(by[pmax], one, 1 / share(pmax)).items(), key=lambda kv: kv[1])
        # Strong: speed-up T(1) / T(P); weak: efficiency, the ideal time over the time.
        gain = (lambda p, t: t1 / t) if mode == "strong" else (lambda p, t: t1 * share(p) / t)  # noqa: E731
        measured = {p: gain(p, step_ms(r)) for p, r in sorted(by.items())}
        # n-body's weak runs gather P times the bodies to every rank: the overhead grows with P.
        grows = app == "nbody" and mode == "weak"
        projected = {p: gain(p, t1 * share(p) + over * (p / pmax if grows else 1)) for p in a.gpus}
        rows.append((transport, label(by[pmax] if mode != "weak" else one), mode, measured, projected, over / one["steps"], worst))

    gpus_measured = sorted({p for r in rows for p in r[3]})
    for transport in sorted({r[0] for r in rows}):
        print(f"\n{transport}: speed-up over one GPU (strong) or efficiency (weak); projected columns are the model's, not measurements")
        head = " | ".join([f"{p} GPU{'s' if p > 1 else ''}" for p in gpus_measured] + [f"{p} (projected)" for p in a.gpus])
        print(f"| run | {head} | overhead at {max(gpus_measured)} GPUs, ms/step (largest phase) |")
        print("|---|" + "---|" * (len(gpus_measured) + len(a.gpus) + 1))
        for t, name, mode, measured, projected, over_step, worst in rows:
            if t != transport:
                continue
            cells = [f"{measured[p]:.2f}" if p in measured else "" for p in gpus_measured]
            cells += [f"{projected[p]:.2f}" for p in a.gpus]
            print(f"| {name} | " + " | ".join(cells) + f" | {over_step:.3f} ({worst[0]}) |")

    if a.chart:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        for ax, mode in zip(axes, ("strong", "weak")):
            for t, name, m, measured, projected, _, _ in rows:
                if m != mode or t != "host":
                    continue
                xs = sorted(measured)
                line, = ax.plot(xs, [measured[p] for p in xs], "o-", label=name)
                px = [xs[-1]] + a.gpus
                ax.plot(px, [measured[xs[-1]]] + [projected[p] for p in a.gpus], "--", color=line.get_color())
            ax.set_xscale("log", base=2)
            ax.set_xlabel("GPUs (solid: measured, dashed: projected)")
            ax.set_ylabel("speed-up over 1 GPU" if mode == "strong" else "efficiency")
            if mode == "strong":
                top = max(a.gpus)
                ax.plot([1, top], [1, top], ":", color="grey", label="ideal")
                ax.set_yscale("log", base=2)
            ax.set_title(f"{mode} scaling, host staging")
            ax.legend(fontsize=7)
            ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        fig.savefig(a.chart, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
