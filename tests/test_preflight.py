"""course.grading.preflight.Preflight: the preflight kernel's process beside the first submissions, in process
(no kernel is started here: with no setup cells there is nothing to run)."""

import pytest

from course.checkout import Course
from course.grading.contract import GradingStopped
from course.grading.preflight import Preflight
from course.grading.sandbox.policy import Sandbox
from grading_support import ROOT

pytestmark = pytest.mark.slow       # each starts a Python that imports nbgrader: seconds


def test_nothing_to_run_passes_and_wait_can_be_asked_again(tmp_path):
    check = Preflight(Course(ROOT), [], {}, Sandbox(bwrap=None), tmp_path / "preflight")
    check.wait()
    check.wait()
    check.close()


def test_a_preflight_process_that_fails_stops_the_run(tmp_path):
    missing = tmp_path / "no-such-template.db"
    check = Preflight(Course(ROOT), ["01_tensors_devices"], {"01_tensors_devices": missing}, Sandbox(bwrap=None),
                      tmp_path / "preflight")
    with pytest.raises(GradingStopped, match="preflight process"):
        check.wait()
    with pytest.raises(GradingStopped):     # and keeps saying so
        check.wait()
    check.close()


def test_close_ends_a_preflight_that_still_runs(tmp_path):
    check = Preflight(Course(ROOT), [], {}, Sandbox(bwrap=None), tmp_path / "preflight")
    check.close()
    assert check._proc.poll() is not None
