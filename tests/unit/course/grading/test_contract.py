"""course.grading.contract: what crosses from a worker to the TA's process can be written anywhere."""

import json
import pickle

import pytest

from course.grading.contract import (
    Event,
    EventKind,
    FailureKind,
    GraderFailure,
    GradeResult,
    Job,
    Problem,
    ProblemKind,
    printable,
    read_events,
)

JOB = Job(assignment="01_tensors", student="ann", submission="/class/submitted/ann/01_tensors", source="/course/source",
          template_db="/tmp/t.db", config_dirs=(), scratch="/tmp/jobs/0", sandbox_json="{}")
RECORD = {"timestamp": "2026-01-02T03:04:05", "notebooks": {"nb": {"late_submission_penalty": None,
                                                                  "grades": {"q1": [1.0, False]}, "comments": {}}}}


def test_a_lone_surrogate_from_a_notebook_becomes_printable_text():
    grade_id = json.loads('"\\ud800"')         # valid JSON, as a submitted notebook may hold it
    result = GradeResult.failed(JOB, FailureKind.GRADER_ERROR, grade_id, log=grade_id,
                                problems=[Problem(f"cell 3 ({grade_id})", f"a duplicated grade id {grade_id}",
                                                  ProblemKind.CELLS)]).printable()
    text = json.dumps(result.to_json(), ensure_ascii=False)
    text.encode("utf-8")                         # raised UnicodeEncodeError before
    assert result.problems == (Problem("cell 3 (\\ud800)", "a duplicated grade id \\ud800", ProblemKind.CELLS),)
    assert result.log == "\\ud800" and result.failure.detail == "\\ud800"
    assert result.failure.kind is FailureKind.GRADER_ERROR and type(result.problems[0].kind) is ProblemKind


def _through(result: GradeResult) -> GradeResult:
    """What a cluster's executor does with a result: pickled to the TA's process, or sent as JSON."""
    again = GradeResult.from_json(json.loads(json.dumps(result.to_json())))
    assert pickle.loads(pickle.dumps(result)) == result
    return again


def test_a_graded_result_survives_json_and_pickle_unchanged():
    result = GradeResult.scored(JOB, graded=True, record=RECORD, autograded="/tmp/jobs/0/autograded/student/01",
                                feedback="/tmp/jobs/0/feedback/student/01", seconds=12.5, seconds_autograde=10.0,
                                seconds_feedback=2.25,
                                problems=[Problem("nb.ipynb", "cell 2 looks like tampering", ProblemKind.TAMPERING),
                                          Problem("nbgrader", "refused", ProblemKind.NBGRADER)])
    again = _through(result)
    assert again == result and again.failure is None
    assert [type(p.kind) for p in again.problems] == [ProblemKind, ProblemKind]
    zero = GradeResult.scored(JOB, graded=False, record=RECORD, log="nbgrader's log")
    assert _through(zero) == zero and zero.autograded is None and zero.seconds is None


@pytest.mark.parametrize("kind", list(FailureKind))
def test_every_failure_kind_survives_json_with_no_score(kind):
    left_out = Problem("submission", "1 file left out", ProblemKind.FILES)
    result = GradeResult.failed(JOB, kind, "why", problems=[left_out], log="traceback", seconds=1.5)
    again = _through(result)
    assert again == result and again.failure == GraderFailure(kind, "why") and again.failure.kind is kind
    assert (again.graded, again.record, again.autograded, again.feedback) == (False, None, None, None)
    assert again.student == "ann" and again.scratch == JOB.scratch
    with pytest.raises(ValueError):
        GradeResult.failed(JOB, "no-such-kind", "why")


def test_a_malformed_stored_result_is_refused():
    good = GradeResult.scored(JOB, graded=True, record=RECORD, seconds=3.0).to_json()
    failed = GradeResult.failed(JOB, FailureKind.HARD_LIMIT, "too long").to_json()
    GradeResult.from_json(good), GradeResult.from_json(failed)
    bad = [None, [], "x", {k: v for k, v in good.items() if k != "graded"}, good | {"extra": 1},
           good | {"graded": "yes"}, good | {"graded": 1}, good | {"seconds": "3"}, good | {"seconds": True},
           good | {"problems": [["nb.ipynb", "x", "no-such-kind"]]}, good | {"problems": [["nb.ipynb", "x"]]},
           good | {"problems": "x"}, good | {"problems": [None]}, good | {"record": None}, good | {"record": []},
           good | {"student": 3}, good | {"log": None},
           failed | {"failure": {"kind": "no-such-kind", "detail": "x"}}, failed | {"failure": {"kind": "hard-limit"}},
           failed | {"failure": "hard-limit"}, failed | {"graded": True}, failed | {"record": RECORD},
           failed | {"failure": {"kind": "hard-limit", "detail": 3}}]
    for data in bad:
        with pytest.raises(ValueError):
            GradeResult.from_json(data)


def test_the_done_marker_keeps_what_it_kept_before():
    result = GradeResult.scored(JOB, graded=True, record=RECORD, seconds=4.0, seconds_autograde=3.0,
                                problems=[Problem("nb.ipynb", "cell 2: x", ProblemKind.RUN)])
    assert json.loads(json.dumps(result.stored())) == {"problems": [["nb.ipynb", "cell 2: x", "run"]], "graded": True,
                                                       "seconds": 4.0, "seconds_autograde": 3.0,
                                                       "seconds_feedback": None}


def test_the_executors_events_are_read_once_as_typed_records(tmp_path):
    written = [{"notebook": "nb", "kind": "output-dropped", "cell": 2, "bytes": 3 << 20},
               {"notebook": "nb", "kind": "processes-stopped", "cell": 2, "count": 40},
               {"notebook": "nb", "kind": "left-running", "count": 1},
               {"notebook": "nb", "kind": "setup-failed", "detail": "cell 1: ModuleNotFoundError: torch"}]
    path = tmp_path / "events.jsonl"
    assert read_events(path) == []
    path.write_text("".join(json.dumps(e) + "\n" for e in written))
    events = read_events(path)
    assert [e.kind for e in events] == [EventKind.OUTPUT_DROPPED, EventKind.PROCESSES_STOPPED, EventKind.LEFT_RUNNING,
                                        FailureKind.SETUP_FAILED]
    assert [e.failure for e in events] == [False, False, False, True]
    assert events[0] == Event(EventKind.OUTPUT_DROPPED, "nb", cell=2, bytes=3 << 20)
    assert events[3].detail == "cell 1: ModuleNotFoundError: torch"
    assert [e.to_json() for e in events] == written
    for bad in ({"notebook": "nb", "kind": "output-dropped", "cell": 2}, {"notebook": "nb", "kind": "grader-error",
                                                                          "detail": "x"},
                {"kind": "left-running", "count": 1}, {"notebook": "nb", "kind": "left-running", "count": "1"}, []):
        with pytest.raises(ValueError):
            Event.from_json(bad)


def test_ordinary_text_is_unchanged():
    assert printable("ü → ✓ 数") == "ü → ✓ 数"


def test_a_problem_survives_the_done_marker_with_its_kind():
    problem = Problem("nb.ipynb", "cell 2 looks like tampering with the grading: x", ProblemKind.TAMPERING)
    again = Problem.from_json(json.loads(json.dumps(problem)))
    assert again == problem and again.kind is ProblemKind.TAMPERING


def test_a_done_marker_of_another_format_or_unreadable_is_graded_again(tmp_path):
    from course.grading.contract import RESULT_FORMAT
    from course.grading.resume import done_problems, write_json

    digest = {"submission": "abc", "definition": "def", "format": RESULT_FORMAT}
    marker = tmp_path / "ann.json"
    problem = Problem("nb.ipynb", "cell 2: memory limit reached (MemoryError:)", ProblemKind.RUN)
    write_json(marker, digest | {"problems": [problem]})
    assert done_problems(marker, digest) == [problem]
    assert done_problems(marker, digest | {"submission": "changed"}) is None
    write_json(marker, {"submission": "abc", "definition": "def", "problems": [["nb.ipynb", "no kind"]]})
    assert done_problems(marker, digest) is None, "a marker from before problems had kinds was taken as done"
    for bad in ([["nb.ipynb", "x", "no-such-kind"]], [["nb.ipynb"]], "x", None):
        write_json(marker, digest | {"problems": bad})
        assert done_problems(marker, digest) is None, bad
    assert done_problems(tmp_path / "missing.json", digest) is None
