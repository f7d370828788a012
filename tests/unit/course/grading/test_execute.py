"""course.grading.execute.GuardedExecute, the decisions it makes without a kernel: which cells are the setup's,
what it records, when a kernel that will not start is the grader's failure. Its runs with a kernel are end to
end in tests/e2e/test_grade_mechanics.py."""

import json
import shutil

import pytest
from nbformat.v4 import new_code_cell

from course.grading.contract import EVENTS_FILE, KERNEL_START, NOT_RUN, SETUP_FAILED, InfrastructureFailure
from course.grading.execute import GuardedExecute


@pytest.fixture
def executor(tmp_path):
    made = GuardedExecute(scratch_dir=str(tmp_path), setup_cells={"nb": ["setup_a", "setup_b"]})
    made.resources = {"unique_key": "nb"}
    made._setup_left = list(made.setup_cells["nb"])
    yield made
    shutil.rmtree(made._answers, ignore_errors=True)


def _locked(grade_id, **meta):
    cell = new_code_cell("import torch")
    cell.metadata["nbgrader"] = {"grade_id": grade_id, "locked": True, "grade": False, "solution": False} | meta
    return cell


def test_only_the_setup_cells_first_and_in_order_are_the_graders(executor):
    assert not executor._is_next_setup_cell(_locked("setup_b"))       # out of order
    assert not executor._is_next_setup_cell(_locked("setup_a", solution=True))
    assert executor._is_next_setup_cell(_locked("setup_a"))
    assert executor._is_next_setup_cell(_locked("setup_b"))
    assert not executor._is_next_setup_cell(_locked("setup_b"))       # each once


def test_the_graders_failures_are_recorded_as_events_of_the_notebook(executor, tmp_path):
    failure = executor._infrastructure(SETUP_FAILED, "cell 1: ImportError")
    assert isinstance(failure, InfrastructureFailure)
    lines = (tmp_path / EVENTS_FILE).read_text().splitlines()
    assert [json.loads(line) for line in lines] == [{"notebook": "nb", "kind": SETUP_FAILED,
                                                     "detail": "cell 1: ImportError"}]


def test_a_kernel_that_will_not_start_is_the_graders_failure_only_before_student_code(executor, tmp_path):
    executor._student_ran = False
    with pytest.raises(InfrastructureFailure):
        executor._not_started(OSError("no bwrap"))
    assert json.loads((tmp_path / EVENTS_FILE).read_text())["kind"] == KERNEL_START
    executor._student_ran = True
    executor._not_started(OSError("no bwrap"))      # a restart later on: the notebook goes on without it


def test_after_giving_up_no_cell_runs_and_each_says_why(executor):
    executor._gave_up = "the kernel was lost 3 times"
    executor._deadline = float("inf")
    cell, _ = executor.preprocess_cell(new_code_cell("x = 1", execution_count=3), {}, 4)
    assert [(o.ename, o.evalue) for o in cell.outputs] == [(NOT_RUN, "the kernel was lost 3 times")]
    assert cell.execution_count is None


def test_the_cell_limit_is_the_sandboxs_else_nbgraders_and_never_past_the_deadline(executor):
    from time import monotonic

    executor.timeout = 50
    executor._deadline = monotonic() + 1000
    assert executor.cell_limit == (executor._sandbox.limits.cell_timeout or 50)
    executor._deadline = monotonic() + 5
    assert executor._cell_timeout(None) <= 5
