"""A release notebook on "Colab": a fresh virtual environment that has torch but not the course,
a stand-in `google.colab` module, and the course address pointed at this checkout.

As on Colab, the torch already there is not the one requirements.txt pins: it is the newest torch
that `course compat` checks (PyPI's CUDA build, borrowed from its cached venv), and it must stay."""

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from course.notebook import cells
from course.tools.compat import NEWEST, cache_dir, ensure_venv
from course.checkout import Course
from grading_support import ROOT

COURSE = Course(ROOT)
FIRST = "01_tensors_devices"
# One worker for everything that uses the compat venv (test_compat.py too): it is built once, by that
# worker, while the other goes on with the rest of the suite instead of waiting on the build's lock.
pytestmark = [pytest.mark.venv, pytest.mark.e2e, pytest.mark.xdist_group("venv")]


@pytest.fixture(scope="module")
def colab_like(tmp_path_factory):
    """(kernel name, venv site-packages, env for the kernel) of a Colab-like environment."""
    tmp = tmp_path_factory.mktemp("colab")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    venv_site = Path(subprocess.check_output(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True).strip())
    # Colab ships torch, numpy, matplotlib, ipywidgets and a kernel: borrow those of the compat venv
    # of torch NEWEST (not the pinned torch), as a plain path entry (.pth files there, such as
    # that venv's editable install of this course, are not run).
    preinstalled = ensure_venv(COURSE, NEWEST, cache_dir(COURSE, NEWEST))
    borrowed = subprocess.check_output(
        [str(preinstalled), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True).strip()
    (venv_site / "colab_preinstalled.pth").write_text(borrowed + "\n")
    standin = tmp / "standin"
    (standin / "google" / "colab").mkdir(parents=True)
    (standin / "google" / "__init__.py").write_text("")
    (standin / "google" / "colab" / "__init__.py").write_text('"""Stand-in for Colab\'s module."""\n')
    (standin / "sitecustomize.py").write_text("import google.colab  # Colab's kernels start with it imported\n")
    kernels = tmp / "jupyter" / "kernels" / "colab-standin"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Colab stand-in", "language": "python",
        # Colab's pip has none of this machine's pip settings (such as a cap on torch's version).
        "env": {"PYTHONPATH": str(standin), "COURSE_PACKAGE": str(ROOT), "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                "PIP_CONFIG_FILE": os.devnull,
                # its own matplotlib font cache: never the one the checkout's notebooks read
                "MPLCONFIGDIR": str(tmp / "matplotlib")},
    }))
    return "colab-standin", venv_site, tmp / "jupyter"


def test_fresh_environment_lacks_the_course_package(colab_like):
    _, venv_site, _ = colab_like
    python = venv_site.parents[2] / "bin" / "python"
    probe = subprocess.run([str(python), "-c", "import torch, ipykernel; import helpers"],
                           capture_output=True, text=True, cwd=venv_site.parents[3])
    assert "No module named 'helpers'" in probe.stderr


def kernel_torch(colab_like) -> str:
    python = colab_like[1].parents[2] / "bin" / "python"
    return subprocess.check_output([str(python), "-c", "import torch; print(torch.__version__)"], text=True).strip()


def test_colab_has_another_torch_than_the_pinned_one(colab_like):
    pinned = next(line.split("==")[1] for line in (ROOT / "requirements.txt").read_text().splitlines()
                  if line.startswith("torch=="))
    assert kernel_torch(colab_like).split("+")[0] == NEWEST != pinned


def test_release_notebook_installs_the_course_and_runs(colab_like, monkeypatch, tmp_path):
    kernel, venv_site, jupyter_path = colab_like
    monkeypatch.setenv("JUPYTER_PATH", str(jupyter_path))
    nb = cells.read(COURSE.release_notebook(FIRST))
    NotebookClient(nb, kernel_name=kernel, timeout=300, allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [(i, o.ename, o.evalue) for i, c in enumerate(nb.cells) if c.cell_type == "code"
              for o in c.outputs if o.output_type == "error"]
    assert not errors, f"Run All must go on past the unwritten exercises: {errors}"
    todo = [c for c in nb.cells if cells.is_test(c)
            and not "".join(o.get("text", "") for o in c.outputs).startswith("TODO ")]
    assert not todo, f"test cells of unwritten exercises that do not say TODO: {[cells.grade_id(c) for c in todo]}"
    installed = {p.name.split("-")[0].lower() for p in venv_site.glob("*.dist-info")}
    assert "pytorch_course_section10" in installed, sorted(installed)
    assert not installed & {"torch", "numpy", "matplotlib", "ipywidgets"}, "the setup cell reinstalled what Colab has"
    setup = next(c for c in nb.cells if cells.grade_id(c) == "setup")
    assert f"torch {kernel_torch(colab_like)};" in "".join(o.get("text", "") for o in setup.outputs)
    self_check = next(c for c in nb.cells if cells.grade_id(c) == "self_check")
    printed = "".join(o.get("text", "") for o in self_check.outputs)
    assert f"0/{len(cells.exercises(nb))} exercises pass their visible tests" in printed and "TODO" in printed


# Before the setup cell: a GPU machine as torch.cuda reports it, without a GPU (no kernel ever runs on it).
PRETEND_GPU = """\
from types import SimpleNamespace
import torch
torch.cuda.is_available = lambda: True
torch.cuda.current_device = lambda: 0
torch.cuda.get_device_properties = lambda index: SimpleNamespace(name="Stand-in GPU", total_memory=15 * 2**30)
"""


def test_setup_cell_picks_cuda_where_torch_reports_it(colab_like, monkeypatch, tmp_path):
    kernel, _, jupyter_path = colab_like
    monkeypatch.setenv("JUPYTER_PATH", str(jupyter_path))
    release = cells.read(COURSE.release_notebook(FIRST))
    setup = next(c for c in release.cells if cells.grade_id(c) == "setup")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(PRETEND_GPU), setup,
                                         nbformat.v4.new_code_cell("print('device type:', device.type)")])
    NotebookClient(nb, kernel_name=kernel, timeout=300,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    printed = "".join(o.get("text", "") for c in nb.cells[1:] for o in c.outputs)
    assert "computing on cuda:0 (Stand-in GPU, 15.0 GiB)" in printed, printed
    assert "device type: cuda" in printed, printed
