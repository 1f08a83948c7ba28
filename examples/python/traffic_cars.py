"""Traffic's cars as a pandas table: where they are, how fast they go.

    python examples/python/traffic_cars.py [--steps 200] [--seed 1]

m.agents("Car") gives one NumPy array per field of the Car class (id, position, destination,
velocity, max_velocity); pandas takes the dict as it is."""

import argparse

import pandas as pd

from shoal.apps import Traffic


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()

    m = Traffic(seed=a.seed)
    m.step(a.steps)
    cars = pd.DataFrame(m.agents("Car"))
    print(f"{len(cars)} cars after {m.steps} steps (census: {m.census()['cars']})")
    print(cars.describe().loc[["mean", "min", "max"]].to_string())
    share = cars.groupby("velocity").size() / len(cars)
    print("share of cars by velocity:")
    print(share.to_string())
    stopped = (cars.velocity == 0).sum()
    print(f"stopped: {stopped} ({stopped / len(cars):.1%})")


if __name__ == "__main__":
    main()
