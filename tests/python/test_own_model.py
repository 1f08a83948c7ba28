"""A model of one's own as a Python module: examples/python_model (the tutorial's meadow, built
against an installed Shoal with shoal_add_python_module). SHOAL_PYTHON_MODEL_DIR names the folder
of the built module; scripts/python-tests.sh builds it and sets it."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

MODEL_DIR = os.environ.get("SHOAL_PYTHON_MODEL_DIR", "")
BIN = os.environ.get("SHOAL_APPS_BIN", "")

if not MODEL_DIR:
    pytest.skip("SHOAL_PYTHON_MODEL_DIR is not set (scripts/python-tests.sh builds examples/python_model)",
                allow_module_level=True)
sys.path.insert(0, MODEL_DIR)
import meadow_py  # noqa: E402


def test_the_meadow_gives_the_tutorial_programs_numbers():
    m = meadow_py.Meadow(rabbits=300)
    m.step(9)
    out = subprocess.run([os.path.join(BIN, "tutorial_step5_app"), "--quiet", "--rabbits", "300", "--steps", "9"],
                         check=True, capture_output=True, text=True).stdout
    line = dict(re.findall(r"(\w+)=(\S+)", out.strip().splitlines()[-1]))
    assert m.census() == {"rabbits": int(line["rabbits"])}
    assert m.checksum() == int(line["checksum"])


def test_fields_come_by_name_and_a_do_all_of_its_own_runs():
    m, n = meadow_py.Meadow(rabbits=50), meadow_py.Meadow(rabbits=50)
    m.step(1)
    n.live(1)  # the do-all that step 1 runs, called directly
    assert n.census() == m.census() and n.checksum() == m.checksum()
    assert n.steps == 0
    rabbits = n.agents("Rabbit")
    assert list(rabbits) == ["id", "age"] and rabbits["age"].dtype == np.int32
    assert np.bincount(rabbits["age"]).tolist() == [25, 50]  # 25 young ones (odd ids), 50 aged one day


def test_its_errors_are_the_programs():
    with pytest.raises(ValueError, match="--rabbits"):
        meadow_py.Meadow(rabbits=0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'foxes'"):
        meadow_py.Meadow(foxes=3)
