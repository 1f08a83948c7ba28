"""examples/python runs headless: the Wa-Tor sweep writes its chart, the traffic table adds up."""

import os
import re
import subprocess
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python")


def run(script, *args, cwd):
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run([sys.executable, os.path.join(EXAMPLES, script), *args], cwd=cwd, env=env,
                          check=True, capture_output=True, text=True).stdout


def test_the_wator_sweep_writes_a_chart_of_every_seed(tmp_path):
    pytest.importorskip("matplotlib")  # (on a GPU machine without it; CI installs it)
    out = run("wator_sweep.py", "--seeds", "3", "--steps", "20", "--size", "48", "--out", "sweep.png", cwd=tmp_path)
    assert len(re.findall(r"^seed \d: fish \d+, sharks \d+ after 20 steps$", out, re.M)) == 3
    chart = tmp_path / "sweep.png"
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and chart.stat().st_size > 10_000


def test_the_traffic_table_counts_every_car(tmp_path):
    pytest.importorskip("pandas")
    out = run("traffic_cars.py", "--steps", "30", cwd=tmp_path)
    cars, census = map(int, re.search(r"^(\d+) cars after 30 steps \(census: (\d+)\)$", out, re.M).groups())
    assert cars == census > 0
    shares = [float(x) for x in re.findall(r"^\d+\s+([0-9.]+)$", out, re.M)]
    assert abs(sum(shares) - 1.0) < 1e-5  # printed with 6 digits
