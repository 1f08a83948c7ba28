#!/usr/bin/env python3
"""Strong and weak scaling of the MPI programs (wator_mpi, traffic_mpi, nbody_mpi), one rank per GPU.

    python3 bench/scaling.py [BIN_DIR] [--ranks 1 2 4] [--apps wator traffic nbody] [--transports host nccl]
                             [--out FILE.json]

For each app and rank count it runs `MPIEXEC -n RANKS BIN_DIR/<app>_mpi --quiet --timing` at
  - strong scaling, the defaults and 4x the defaults (Wa-Tor's grid twice as wide and high,
    traffic's intersections and n-body's bodies times 4): the same run on more ranks;
  - weak scaling, the defaults per rank (Wa-Tor's grid RANKS times as high, RANKS times the
    intersections or bodies);
each run of several ranks once per transport (SHOAL_DIST_TRANSPORT: host staging, NCCL), and
prints a table: seconds, speed-up over one rank (strong) or efficiency (weak), each phase's
share of the step from --timing (the exchanges included: halo, claims, migrate, occupancy,
gathered forces), and whether the checksum equals one rank's. Wa-Tor's and traffic's must be equal
at every rank count (the programs are bit-identical to one process); n-body's agree to within
rounding, so its column says so instead. Exits 1 if a run fails or a Wa-Tor or traffic checksum
differs.

Environment: MPIEXEC (default mpiexec), MPI_FLAGS (extra mpiexec flags, e.g. "--oversubscribe"; NCCL runs
add "--bind-to none" unless these name a binding),
SCALING_STEPS_DIVISOR (divides every run's steps: for a quick check, e.g. 100), SCALING_SMALL=1
(sizes for a cpu machine: a 256x320 ocean, 600 intersections, 2,000 bodies).
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys

# The defaults of each program (their --help) and how a size is given.
DEFAULTS = {
    "wator": {"steps": 500, "size": (2048, 2560)},
    "traffic": {"steps": 12000, "size": 17500},
    "nbody": {"steps": 3000, "size": 20000},
}
SMALL = {"wator": (256, 320), "traffic": 600, "nbody": 2000}
EXACT = {"wator", "traffic"}  # bit-identical to one process at every rank count


def size_args(app, size):
    # Heaps as the programs ask for them (their "needs --heap-mb" lines): Wa-Tor 49.5 bytes a cell
    # (a 4096 x 5120 grid needs 991 MB), traffic 38 KB an intersection; every rank gets the same.
    if app == "wator":
        return ["--width", str(size[0]), "--height", str(size[1]), "--heap-mb", str(max(512, size[0] * size[1] * 50 // (1 << 20) + 16))]
    if app == "traffic":
        return ["--intersections", str(size), "--heap-mb", str(max(512, size // 26 + 16))]
    return ["--bodies", str(size)]


def scaled(app, size, k, weak):
    """The size k times the base: Wa-Tor's grid k times as high (weak) or sqrt(k) per side (strong)."""
    if app == "wator":
        if weak:
            return (size[0], size[1] * k)
        side = int(round(k ** 0.5))
        return (size[0] * side, size[1] * side)
    return size * k


def mpi_flags(transport):
    """MPI_FLAGS, and for NCCL `--bind-to none` unless they bind otherwise: bound to one core, NCCL's
    proxy thread waits behind the rank's own (a Wa-Tor halo swap 0.34 ms against 0.15 ms, two H200s)."""
    flags = shlex.split(os.environ.get("MPI_FLAGS", ""))
    if transport == "nccl" and not any(f.lstrip("-").startswith("bind-to") for f in flags):
        flags += ["--bind-to", "none"]
    return flags


def run(mpiexec, ranks, exe, args, transport):
    env = dict(os.environ, SHOAL_DIST_TRANSPORT=transport)
    cmd = shlex.split(mpiexec) + ["-n", str(ranks)] + mpi_flags(transport) + [exe] + args
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit status {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    summary = next((l for l in p.stdout.splitlines() if "checksum=" in l), "")
    fields = dict(re.findall(r"(\w+)=(\S+)", summary))
    phases = {}
    for line in p.stdout.splitlines():
        m = re.match(r"timing: (\S.*?)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)%", line)
        if m and not line.startswith("timing:   "):  # top-level phases only
            phases[m.group(1)] = float(m.group(3))
    return {"seconds": float(fields["seconds"]), "checksum": fields["checksum"], "phases_ms": phases, "command": cmd}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_bin = "build/cuda-release/bin" if os.path.isdir("build/cuda-release/bin") else "build/cpu-release/bin"
    ap.add_argument("bin_dir", nargs="?", default=default_bin)
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--apps", nargs="+", default=["wator", "traffic", "nbody"], choices=sorted(DEFAULTS))
    ap.add_argument("--transports", nargs="+", default=["host"], choices=["host", "nccl"],
                    help="transports for runs of several ranks (one rank copies on its own GPU)")
    ap.add_argument("--out", help="also write every run as JSON here")
    a = ap.parse_args()
    if 1 not in a.ranks:
        ap.error("--ranks must include 1 (the runs are compared with one rank's)")
    mpiexec = os.environ.get("MPIEXEC", "mpiexec")
    divisor = int(os.environ.get("SCALING_STEPS_DIVISOR", "1"))
    small = os.environ.get("SCALING_SMALL") == "1"

    results, failed = [], False
    print(f"{'app':8} {'mode':7} {'size':>12} {'ranks':>5} {'transport':9} {'seconds':>9} {'vs 1 rank':>9}  same checksum  phases (% of the run)")
    for app in a.apps:
        base = SMALL[app] if small else DEFAULTS[app]["size"]
        steps = max(1, DEFAULTS[app]["steps"] // divisor)
        exe = os.path.join(a.bin_dir, f"{app}_mpi")
        for mode, k in (("strong", 1), ("strong", 4), ("weak", None)):
            one = None
            for r, transport in [(r, t) for r in sorted(a.ranks) for t in (["host"] if r == 1 else a.transports)]:
                size = scaled(app, base, k, False) if mode == "strong" else scaled(app, base, r, True)
                args = size_args(app, size) + ["--steps", str(steps), "--quiet", "--timing"]
                try:
                    res = run(mpiexec, r, exe, args, transport)
                except RuntimeError as e:
                    print(e, file=sys.stderr)
                    failed = True
                    continue
                if r == 1:
                    one = res
                ratio = one["seconds"] / res["seconds"] if one else float("nan")
                same = "" if one is None or mode == "weak" else (
                    "yes" if res["checksum"] == one["checksum"] else ("no" if app in EXACT else "within rounding"))
                if same == "no":
                    failed = True
                total = sum(res["phases_ms"].values()) or 1.0
                shares = ", ".join(f"{p} {100 * ms / total:.0f}" for p, ms in res["phases_ms"].items())
                label = "x".join(map(str, size)) if isinstance(size, tuple) else str(size)
                print(f"{app:8} {mode:7} {label:>12} {r:>5} {transport:9} {res['seconds']:>9.3f} {ratio:>9.2f}  {same:13}  {shares}")
                results.append({"app": app, "mode": mode, "size": size, "ranks": r, "transport": transport, "steps": steps, **res})
    if a.out:
        with open(a.out, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
