"""`course compat`: the course on the newest torch on PyPI, in a virtual environment of its own.

The real run installs that torch (PyPI's CUDA build, which runs on a CPU) and the pinned rest in
build/compat/<version>/ (minutes on a clean machine, then reused), autogrades the reference,
untouched and one wrong and one right answer of each exercise there; the reference submission, run
whole, must raise in no cell. In the suite it does so for the two notebooks whose APIs move most
between torch versions (03: autocast and GradScaler; 04: torch.load's weights_only and its errors,
what broke on torch 2.4.0): all six took 305 s of the suite's 30 min. A maintainer runs all six,
`course compat VERSION`, before raising the pin (the README's Measured section).
"""

import subprocess
import sys

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from course.tools.compat import NEWEST, _cells_that_raised, _origin_problems, _pins
from course.checkout import Course
from grading_support import ROOT

COURSE = Course(ROOT)
API_SENSITIVE = ("03_gpu_memory", "04_serialization")


def report(version="2.15.0", url="https://example.org/torch-2.15.0-cp311-linux_x86_64.whl"):
    """The part of torch's entry in `pip install --report` that _origin_problems reads."""
    return {"metadata": {"name": "torch", "version": version}, "download_info": {"url": url}}


def test_torch_must_come_from_the_index_at_the_asked_version():
    assert _origin_problems(report(), "2.15.0") == []
    assert _origin_problems(report(version="2.15.0+cu132"), "2.15.0") == []
    local = _origin_problems(report(url="file:///opt/wheels/torch-2.15.0+cpu.whl"), "2.15.0")
    assert local == ["torch 2.15.0 came from file:///opt/wheels/torch-2.15.0+cpu.whl, not from the package index"]
    assert _origin_problems(report(version="2.14.1"), "2.15.0") == ["pip installed torch 2.14.1, not 2.15.0"]
    assert _origin_problems(None, "2.15.0") == ["pip installed no torch 2.15.0"]


def test_the_venv_gets_every_pin_but_torch():
    pins = _pins(COURSE)
    assert pins and not any(p.lower().startswith("torch") for p in pins)
    assert all("==" in p for p in pins), pins
    assert any(p.startswith("nbgrader==") for p in pins)


def test_a_reference_cell_that_raised_is_found(tmp_path):
    error = new_output("error", ename="TypeError", evalue="unexpected keyword", traceback=[])
    nb = new_notebook(cells=[new_code_cell("print(1)", outputs=[new_output("stream", name="stdout", text="1\n")]),
                             new_code_cell("f(x=1)", outputs=[error]),
                             new_code_cell("raise ValueError", outputs=[error],
                                           metadata={"tags": ["raises-exception"]})])
    nbformat.write(nb, str(tmp_path / "nb.ipynb"))
    assert _cells_that_raised(tmp_path / "nb.ipynb") == [(1, "TypeError: unexpected keyword")]


@pytest.mark.venv
@pytest.mark.e2e
@pytest.mark.xdist_group("venv")      # with test_colab.py, which uses the same venv
def test_newest_torch_grades_and_runs_the_course():
    result = subprocess.run([sys.executable, "-m", "course.cli", "--root", str(ROOT), "compat", NEWEST,
                             *API_SENSITIVE, "--sample", "1"], capture_output=True, text=True, timeout=1500)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-6000:]
    assert f"course compat: torch {NEWEST}: all held" in result.stdout, out[-6000:]
    lines = [line for line in result.stdout.splitlines() if "wrong answers losing points" in line]
    assert len(lines) == len(API_SENSITIVE), out[-6000:]
    assert all("reference notebook ran without error" in line for line in lines), lines
