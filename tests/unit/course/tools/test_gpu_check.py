"""`course gpu-check`: exits cleanly without CUDA, and its report shows only what it measured."""

import subprocess
import sys
from unittest import mock

import pytest

from course.tools.gpu_check import REPORT, gpu_check, render_report
from course.checkout import Course
from grading_support import ROOT



def test_without_cuda_it_runs_nothing_and_changes_nothing():
    before = (ROOT / REPORT).read_text()
    said = []
    with mock.patch("torch.cuda.is_available", return_value=False):
        assert gpu_check(Course(ROOT), say=lambda *a, **k: said.append(a[0])) == 0
    assert "no CUDA device" in said[0]
    assert (ROOT / REPORT).read_text() == before


@pytest.mark.slow      # a Python that imports torch
def test_command_line_exits_zero_on_a_cpu_machine():
    result = subprocess.run([sys.executable, "-m", "course.cli", "--root", str(ROOT), "gpu-check"],
                            capture_output=True, text=True, env={"CUDA_VISIBLE_DEVICES": "", "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    assert "no CUDA device" in result.stdout


def test_report_renders_the_measured_figures():
    identity = {"gpu": "Test GPU", "memory_gib": 10.0, "gpu_count": 1, "driver": "1.0", "torch": "2.x", "cuda": "12"}
    notebooks = [{"notebook": "01_tensors_devices",
                  "runs": {"passed": True, "summary": "31 passed", "failed": [], "seconds": 9.5},
                  "outputs": {"passed": False, "summary": "3 failed, 28 passed", "failed": ["Cell 2"], "seconds": 9.6}},
                 {"notebook": "02_training_loop",
                  "runs": {"passed": False, "summary": "1 failed, 29 passed", "failed": ["Cell 7"], "seconds": 12.0},
                  "outputs": {"passed": False, "summary": "2 failed, 28 passed", "failed": [], "seconds": 12.1}}]
    memory = [{"mode": "float32", "peak_bytes": 100 * 2**20, "peak_above_start_bytes": 90 * 2**20, "step_ms": 2.0},
              {"mode": "float16 autocast", "peak_bytes": 55 * 2**20, "peak_above_start_bytes": 45 * 2**20,
               "step_ms": 1.0}]
    text = render_report(identity, notebooks, memory, None, "2026-01-01 00:00 UTC")
    assert "Test GPU" in text and "| float16 autocast | 45.00 MiB | 0.50 | 55.00 MiB | 1.00 ms |" in text
    assert "fewer than two GPUs" in text
    assert "| 01_tensors_devices | yes (31 passed) | 3 failed, 28 passed | 9.5 s |" in text
    assert "| 02_training_loop | NO (1 failed, 29 passed; failed: Cell 7) |" in text


def test_committed_report_holds_no_unmeasured_figure():
    text = (ROOT / REPORT).read_text()
    assert "Produced by `course gpu-check` on" in text or "Not yet measured" in text
