"""The Python module against the programs: same numbers, same checks, checkpoints both ways,
columns by field name, the GIL released while stepping, Ctrl-C between steps.

SHOAL_APPS_BIN names the folder of the built programs (build/<preset>/bin); scripts/test.sh sets
it. The tests that compare with a program need it."""

import os
import re
import signal
import subprocess
import threading
import time
import _thread

import numpy as np
import pytest

import shoal
from shoal import apps
from shoal.apps import Traffic, WaTor

BIN = os.environ.get("SHOAL_APPS_BIN", "")


def program(name, *args):
    """Runs a program with --quiet; returns its summary line's fields as a dict of ints."""
    if not BIN:
        pytest.fail("SHOAL_APPS_BIN is not set: the folder of the built programs (build/cpu-release/bin)")
    out = subprocess.run([os.path.join(BIN, name), "--quiet", *args], check=True, capture_output=True, text=True).stdout
    line = out.strip().splitlines()[-1]
    return {k: v for k, v in re.findall(r"(\w+)=(\S+)", line)}


def test_a_model_gives_the_programs_numbers():
    m = WaTor(width=96, height=80, seed=11)
    m.step(30)
    line = program("wator", "--width", "96", "--height", "80", "--seed", "11", "--steps", "30")
    assert m.steps == 30
    assert m.census() == {"fish": int(line["fish"]), "sharks": int(line["sharks"])}
    assert m.checksum() == int(line["checksum"])

    t = Traffic(seed=3)
    t.step(12)
    line = program("traffic", "--seed", "3", "--steps", "12")
    assert t.census()["cars"] == int(line["cars"])
    assert t.checksum() == int(line["checksum"])


@pytest.mark.parametrize(
    "cls, name, keywords",
    [
        (apps.Sugarscape, "sugarscape", dict(width=64, height=64, seed=4)),
        (apps.NBody, "nbody", dict(bodies=500)),
        (apps.BarnesHut, "barnes_hut", dict(bodies=2000)),
        (apps.Collision, "collision", dict(bodies=500)),
        (apps.Generation, "generation", dict(width=100, height=100, burst_length=20, density=0.1)),
        (apps.GameOfLife, "game_of_life", dict(width=90, height=70, variant="cells")),
        (apps.GameOfLife, "game_of_life", dict(width=90, height=70, variant="no-cell", seed=3)),
    ],
)
def test_every_app_gives_its_programs_numbers(cls, name, keywords):
    m = cls(**keywords)
    m.step(4)
    args = [w for k, v in keywords.items() for w in ("--" + k.replace("_", "-"), str(v))]
    line = program(name, *args, "--steps", "4")
    assert m.checksum() == int(line["checksum"])
    assert {k: str(v) for k, v in m.census().items()} == {k: line[k] for k in m.census()}


def test_keywords_are_checked_as_the_program_checks_its_flags():
    with pytest.raises(ValueError, match=r"--width: .*1\.\.65536.*'0'"):
        WaTor(width=0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'widht'"):
        WaTor(widht=64)
    with pytest.raises(TypeError, match="unexpected keyword argument 'steps'"):
        WaTor(steps=10)  # a model steps with step()
    with pytest.raises(TypeError, match="width must be a number or a string"):
        WaTor(width=[64])
    with pytest.raises(ValueError, match="heap"):
        WaTor(width=4096, height=4096, heap_mb=1)


def test_agents_are_columns_named_as_the_fields():
    m = WaTor(width=64, height=64, seed=5)
    m.step(10)
    census = m.census()
    fish, sharks, agents = m.agents("Fish"), m.agents("Shark"), m.agents("Agent")
    assert list(fish) == ["cell", "target", "priority", "timer"]
    assert list(sharks) == ["cell", "target", "priority", "timer", "energy"]
    assert len(fish["cell"]) == census["fish"] and len(sharks["energy"]) == census["sharks"]
    assert len(agents["cell"]) == census["fish"] + census["sharks"]  # a base class reads its subclasses
    assert fish["cell"].dtype == np.uint32 and sharks["energy"].dtype == np.int32
    cells = np.concatenate([fish["cell"], sharks["cell"]])
    assert len(np.unique(cells)) == len(cells) and cells.max() < 64 * 64  # one agent per cell
    with pytest.raises(ValueError, match="no class 'Whale'.*Agent, Fish, Shark"):
        m.agents("Whale")


def on_host(array):
    """A NumPy array of what `array` holds: itself, or a copy of a device array (through PyTorch)."""
    if isinstance(array, np.ndarray):
        return array
    torch = pytest.importorskip("torch")
    return torch.from_dlpack(array).cpu().numpy()


def test_device_columns_hold_what_the_host_columns_hold():
    m = WaTor(width=64, height=64, seed=6)
    m.step(8)
    host, device = m.agents("Shark"), m.agents("Shark", device=True)
    assert list(device) == list(host)
    if shoal.backend == "cpu":
        assert all(isinstance(a, np.ndarray) for a in device.values())  # the same NumPy arrays
    else:
        assert all(a.__dlpack_device__()[0] == 2 for a in device.values())  # kDLCUDA
    for name in host:
        assert (on_host(device[name]) == host[name]).all(), name


def test_agent_view_is_the_heap_itself():
    m = WaTor(width=64, height=64, seed=7)
    m.step(6)
    fields, live = m.agent_view("Shark")
    assert list(fields) == ["cell", "target", "priority", "timer", "energy"]
    mask = on_host(live).astype(bool)
    assert mask.sum() == m.census()["sharks"]
    columns = m.agents("Shark")
    for name, column in columns.items():  # the live slots in heap order are the rows of agents()
        assert (on_host(fields[name])[mask] == column).all(), name
    # Writes go to the objects: no copy in between.
    if shoal.backend == "cpu":
        fields["energy"][mask] = 1234
    else:
        torch = pytest.importorskip("torch")
        torch.from_dlpack(fields["energy"])[torch.from_dlpack(live).bool()] = 1234
    assert (m.agents("Shark")["energy"] == 1234).all()
    with pytest.raises(ValueError, match="Agent is abstract"):
        m.agent_view("Agent")
    with pytest.raises(ValueError, match="no class 'Whale'"):
        m.agent_view("Whale")


def test_a_saved_model_resumes_here_and_in_the_program(tmp_path):
    m = WaTor(width=64, height=48, seed=9)
    m.step(15)
    path = str(tmp_path / "w.shoal")
    m.save(path)
    r = WaTor.resume(path)
    assert r.steps == 15 and r.census() == m.census()
    m.step(10)
    r.step(10)
    assert r.checksum() == m.checksum() and r.row() == m.row()
    line = program("wator", "--resume", path, "--steps", "25")
    assert int(line["checksum"]) == m.checksum()
    with pytest.raises(ValueError, match="--resume"):
        WaTor.resume(str(tmp_path / "missing.shoal"))


def test_the_gil_is_released_while_stepping():
    m = WaTor(width=256, height=256, seed=1)
    ticks = [0]
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks[0] += 1

    t = threading.Thread(target=count)
    t.start()
    time.sleep(0.05)
    before = ticks[0]
    m.step(200)
    during = ticks[0] - before
    stop.set()
    t.join()
    assert during > 1000, f"the other thread counted {during} while the model stepped"


def test_ctrl_c_stops_between_steps_and_the_model_goes_on():
    # Python's own handler: a process started in the background (`cmd &` in a script) inherits
    # SIGINT ignored, and then interrupt_main() does nothing.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    m = WaTor(width=256, height=256, seed=2)
    threading.Timer(0.3, _thread.interrupt_main).start()
    try:
        with pytest.raises(KeyboardInterrupt):
            m.step(20_000)  # minutes of steps; without the check the interrupt comes after them all
    finally:
        signal.signal(signal.SIGINT, previous)
    done = m.steps
    assert 0 < done < 20_000
    m.step(3)
    assert m.steps == done + 3 and sum(m.census().values()) > 0


def test_the_backend_is_named():
    assert shoal.backend in ("cpu", "cuda")


def test_frame_is_the_programs_picture_without_its_chart(tmp_path):
    import matplotlib.image

    m = WaTor(width=64, height=48, seed=7)
    m.step(5)
    picture = m.frame()
    program("wator", "--width", "64", "--height", "48", "--seed", "7", "--steps", "5", "--frames", str(tmp_path),
            "--frame-every", "5", "--overlay", "none")
    png = (matplotlib.image.imread(str(tmp_path / "frame_000005.png")) * 255).round().astype(np.uint8)
    assert picture.dtype == np.uint8 and picture.shape[1:] == (png.shape[1], 4)
    assert 0 < picture.shape[0] < png.shape[0]  # the chart panel is below the scene
    assert np.array_equal(picture, png[: picture.shape[0]])
