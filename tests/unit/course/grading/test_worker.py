"""course.grading.worker, the parts that run without a kernel: what a failure's
log and line say, and that grading a submission never raises. Grading itself runs end to end in
tests/e2e/test_grade_mechanics.py and tests/e2e/test_grade_batch.py."""


import pytest

from course.grading import worker
from course.grading.contract import FailureKind, GradeResult, Job
from course.grading.sandbox.policy import Sandbox


def _job(tmp_path, **changes) -> Job:
    fields = dict(assignment="a1", student="s1", submission=str(tmp_path / "missing" / "s1" / "a1"),
                  source=str(tmp_path / "source" / "a1"), template_db=str(tmp_path / "template.db"),
                  config_dirs=(), scratch=str(tmp_path / "scratch"), sandbox_json=Sandbox(bwrap=None).to_json())
    return Job(**(fields | changes))


def test_grading_never_raises_a_failure_of_the_graders_is_a_result(tmp_path):
    result = worker.grade_submission(_job(tmp_path))      # no submission there: prepare() fails
    assert isinstance(result, GradeResult)
    assert result.failure is not None and result.failure.kind is FailureKind.GRADER_ERROR
    assert result.record is None and not result.graded
    assert "Traceback" in result.log and result.seconds is not None
    assert result.failure.detail.split(":")[0] in result.log       # 'Type: message' of what was raised


def test_no_execute_step_to_replace_is_refused(tmp_path, monkeypatch):
    from nbgrader.converters import Autograde

    class Trait:
        def make_dynamic_default(self):
            return []       # an nbgrader whose autograde would run test cells some other way

    monkeypatch.setattr(Autograde, "class_traits", classmethod(lambda cls: {"autograde_preprocessors": Trait()}))
    with pytest.raises(RuntimeError, match="no Execute step to replace"):
        worker._api(_job(tmp_path), tmp_path)


def test_the_execute_step_is_swapped_for_the_guarded_one(tmp_path, monkeypatch):
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute

    from course.grading.execute import GuardedExecute

    monkeypatch.setattr(worker, "setup_cell_ids", lambda db, assignment, source: {"a1": ["setup"]})
    api = worker._api(_job(tmp_path), tmp_path / "scratch")
    steps = api.config.Autograde.autograde_preprocessors
    default = Autograde.class_traits()["autograde_preprocessors"].make_dynamic_default()
    assert steps == [GuardedExecute if step is Execute else step for step in default]
    assert Execute not in steps
    assert api.config.GuardedExecute.setup_cells == {"a1": ["setup"]}
    assert api.config.GuardedExecute.scratch_dir == str(tmp_path / "scratch" / "kernel")
    assert api.config.CourseDirectory.root == str(tmp_path / "scratch")


@pytest.mark.parametrize("texts, line", [
    (("Traceback (most recent call last):\n  File ...\nValueError: bad\n",), "ValueError: bad"),
    (("KeyError: 'first'\nmore\nnbconvert.exceptions.Timeout: second one\n"
      "NbGraderException: see the log\n",), "nbconvert.exceptions.Timeout: second one"),
    (("no exception here\nthe last line\n\n",), "the last line"),
    (("", "ZeroDivisionError: in the error text"), "ZeroDivisionError: in the error text"),
    (("",), "no message"),
])
def test_exception_line_is_the_last_exception_of_a_log(texts, line):
    assert worker._exception_line(*texts) == line


def test_exception_line_is_capped():
    assert worker._exception_line("ValueError: " + "x" * 1000) == "ValueError: " + "x" * 300


def test_kernel_log_is_the_end_of_the_file_whatever_its_size(tmp_path):
    assert worker._kernel_log(tmp_path) == ""
    (tmp_path / "kernel").mkdir()
    (tmp_path / "kernel" / "kernel.log").write_bytes(b"\xff" + b"a" * 10_000 + b"the end")
    said = worker._kernel_log(tmp_path)
    assert len(said) == 5000 and said.endswith("the end")


def test_failure_log_joins_nbgraders_account_and_the_kernels_capped(tmp_path):
    (tmp_path / "kernel").mkdir()
    (tmp_path / "kernel" / "kernel.log").write_text("bwrap: no permission")
    log = worker._failure_log({"log": "the log\n", "error": "the error"}, tmp_path)
    assert log == "the log\nthe error\n--- kernel.log ---\nbwrap: no permission"
    assert worker._failure_log(None, tmp_path / "nothing") == ""
    assert len(worker._failure_log({"log": "x" * 60_000}, tmp_path / "nothing")) == 50_000
