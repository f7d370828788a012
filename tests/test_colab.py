"""A release notebook on "Colab": a fresh virtual environment that has torch but not the course,
a stand-in `google.colab` module, and the course address pointed at this checkout."""

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from course import cells
from course.paths import Course

ROOT = Path(__file__).resolve().parents[1]
COURSE = Course(ROOT)
FIRST = "01_tensors_devices"


@pytest.fixture(scope="module")
def colab_like(tmp_path_factory):
    """(kernel name, venv site-packages, env for the kernel) of a Colab-like environment."""
    tmp = tmp_path_factory.mktemp("colab")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    venv_site = Path(subprocess.check_output(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True).strip())
    # Colab ships torch, numpy, matplotlib, ipywidgets and a kernel: borrow this machine's, as a
    # plain path entry (.pth files there, such as this course's editable install, are not run).
    (venv_site / "colab_preinstalled.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
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
        "env": {"PYTHONPATH": str(standin), "COURSE_PACKAGE": str(ROOT), "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    }))
    return "colab-standin", venv_site, tmp / "jupyter"


def test_fresh_environment_lacks_the_course_package(colab_like):
    _, venv_site, _ = colab_like
    python = venv_site.parents[2] / "bin" / "python"
    probe = subprocess.run([str(python), "-c", "import torch, ipykernel; import helpers"],
                           capture_output=True, text=True, cwd=venv_site.parents[3])
    assert "No module named 'helpers'" in probe.stderr


def test_release_notebook_installs_the_course_and_runs(colab_like, monkeypatch, tmp_path):
    kernel, venv_site, jupyter_path = colab_like
    monkeypatch.setenv("JUPYTER_PATH", str(jupyter_path))
    nb = cells.read(COURSE.release_notebook(FIRST))
    NotebookClient(nb, kernel_name=kernel, timeout=300, allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [(i, o.ename, o.evalue) for i, c in enumerate(nb.cells) if c.cell_type == "code"
              for o in c.outputs if o.output_type == "error"]
    assert errors, "an untouched release should stop at its exercises"
    assert {ename for _, ename, _ in errors} == {"NotImplementedError"}, errors
    installed = {p.name.split("-")[0].lower() for p in venv_site.glob("*.dist-info")}
    assert "pytorch_course_section10" in installed, sorted(installed)
    assert not installed & {"torch", "numpy", "matplotlib", "ipywidgets"}, "the setup cell reinstalled what Colab has"
    self_check = next(c for c in nb.cells if cells.grade_id(c) == "self_check")
    printed = "".join(o.get("text", "") for o in self_check.outputs)
    assert "0/6 exercises pass their visible tests" in printed and "TODO" in printed
