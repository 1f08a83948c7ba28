"""Wa-Tor over several seeds: the fish and shark populations of each run, as a chart.

    python examples/python/wator_sweep.py [--seeds 8] [--steps 300] [--size 256] [--out wator_sweep.png]

Every run is a shoal.apps.WaTor with the program's flags as keywords; census() after each step
gives the populations. The chart is written headless (matplotlib's Agg backend)."""

import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from shoal.apps import WaTor  # noqa: E402


def populations(seed, steps, size):
    """The fish and shark counts after each of `steps` steps of one run."""
    m = WaTor(width=size, height=size, seed=seed)
    fish, sharks = [], []
    for _ in range(steps):
        m.step()
        c = m.census()
        fish.append(c["fish"])
        sharks.append(c["sharks"])
    return fish, sharks


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=8)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--size", type=int, default=256)
    p.add_argument("--out", default="wator_sweep.png")
    a = p.parse_args()

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for seed in range(1, a.seeds + 1):
        fish, sharks = populations(seed, a.steps, a.size)
        ax.plot(fish, color="tab:blue", alpha=0.6, label="fish" if seed == 1 else None)
        ax.plot(sharks, color="tab:red", alpha=0.6, label="sharks" if seed == 1 else None)
        print(f"seed {seed}: fish {fish[-1]}, sharks {sharks[-1]} after {a.steps} steps")
    ax.set_xlabel("step")
    ax.set_ylabel("agents")
    ax.set_title(f"Wa-Tor, {a.size} x {a.size}, {a.seeds} seeds")
    ax.legend()
    fig.tight_layout()
    fig.savefig(a.out, dpi=100)
    print(f"chart: {a.out}")


if __name__ == "__main__":
    main()
