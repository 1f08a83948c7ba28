"""The Python module's costs beside the programs' (issue 34's goals), in one run:

- each app at its defaults: `m.step(steps)` against the program's own loop time (its summary's
  `seconds=`, the same steps), best of --repeats each;
- reading 10^7 agents (n-body's bodies, 7 float fields): `m.agents("Body")` to the host, against
  the PCIe bandwidth measured here with PyTorch (a pinned and a pageable copy of the same bytes);
  `m.agents("Body", device=True)` and `m.agent_view("Body")` on the device.

    PYTHONPATH=build/cuda-python/python python3 bench/python_bench.py build/cuda-release/bin

Prints a table and one JSON line (`json: {...}`)."""

import argparse
import json
import os
import re
import subprocess
import time

import shoal
from shoal import apps

APPS = [("wator", apps.WaTor), ("traffic", apps.Traffic), ("sugarscape", apps.Sugarscape), ("nbody", apps.NBody),
        ("barnes_hut", apps.BarnesHut), ("collision", apps.Collision), ("generation", apps.Generation)]


def program(bin_dir, name):
    out = subprocess.run([os.path.join(bin_dir, name), "--quiet"], check=True, capture_output=True, text=True).stdout
    fields = dict(re.findall(r"(\w+)=(\S+)", out.strip().splitlines()[-1]))
    return int(fields["steps"]), float(fields["seconds"])


def best(f, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bin_dir")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--agents", type=int, default=10_000_000)
    args = parser.parse_args()
    result = {"backend": shoal.backend, "apps": {}}

    print(f"{'app':<12} {'steps':>6} {'program s':>10} {'python s':>10} {'ratio':>6}")
    for name, cls in APPS:
        runs = [program(args.bin_dir, name) for _ in range(args.repeats)]
        steps, cli = runs[0][0], min(s for _, s in runs)

        def python_run():
            m = cls()
            start = time.perf_counter()
            m.step(steps)
            python_run.seconds = time.perf_counter() - start

        py = []
        for _ in range(args.repeats):
            python_run()
            py.append(python_run.seconds)
        ratio = min(py) / cli
        result["apps"][name] = {"steps": steps, "program_s": cli, "python_s": min(py), "ratio": ratio}
        print(f"{name:<12} {steps:>6} {cli:>10.4f} {min(py):>10.4f} {ratio:>6.3f}")

    m = apps.NBody(bodies=args.agents, heap_mb=2048)
    host = m.agents("Body")
    nbytes = sum(a.nbytes for a in host.values())
    t_host = best(lambda: m.agents("Body"), args.repeats)
    t_device = best(lambda: m.agents("Body", device=True), args.repeats)
    t_view = best(lambda: m.agent_view("Body"), args.repeats)
    reading = {"agents": args.agents, "bytes": nbytes, "host_s": t_host, "host_GBps": nbytes / t_host / 1e9,
               "device_s": t_device, "view_s": t_view}
    try:
        import torch

        if torch.cuda.is_available():
            x = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
            pinned = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
            pageable = torch.empty(nbytes, dtype=torch.uint8)

            def copy(dst):
                dst.copy_(x)
                torch.cuda.synchronize()

            copy(pinned)
            copy(pageable)
            reading["pinned_GBps"] = nbytes / best(lambda: copy(pinned), args.repeats) / 1e9
            reading["pageable_GBps"] = nbytes / best(lambda: copy(pageable), args.repeats) / 1e9
            reading["host_share_of_pinned"] = reading["host_GBps"] / reading["pinned_GBps"]
    except ImportError:
        pass
    result["reading"] = reading
    print(f"agents('Body') of {args.agents} bodies ({nbytes / 1e6:.0f} MB): host {t_host * 1e3:.2f} ms "
          f"({reading['host_GBps']:.1f} GB/s), device=True {t_device * 1e3:.2f} ms, agent_view {t_view * 1e3:.2f} ms")
    if "pinned_GBps" in reading:
        print(f"PCIe here (PyTorch, same bytes): pinned {reading['pinned_GBps']:.1f} GB/s, pageable "
              f"{reading['pageable_GBps']:.1f} GB/s; agents() at {100 * reading['host_share_of_pinned']:.0f}% of pinned")
    print("json: " + json.dumps(result))


if __name__ == "__main__":
    main()
