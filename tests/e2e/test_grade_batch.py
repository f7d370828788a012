"""`course grade` on one class: honest submissions and every bad one in fixtures/bad_submissions/, one batch.

The honest students are the ones course.submissions.answers grades with plain `nbgrader
autograde` (reference answers, the untouched release, the first wrong answers), so that
their grades here can be compared cell by cell with nbgrader's own, at no extra cost: the
tests share that run by staying in its xdist group.
"""

import base64
import functools
import re
import sqlite3
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest
from course.submissions.bad import all_bad, matches, report_lines, submit_bad
from grading_support import COURSE, secret_lines, shown_lines, wrong_answers
from grading_support import grade as plain_nbgrader

from course.notebook import cells
from course.grading.batch import grade
from course.grading.contract import GradeOptions
from course.grading.gradebooks import cell_scores
from course.notebook.nbgrader_runs import submit
from course.grading.diagnose import TAMPERING
from course.grading.sandbox.policy import Limits
from course.submissions import reference_answers, with_answers

ASSIGNMENT = "01_tensors_devices"
HONEST = ("reference", "untouched", "wrong0")
BAD = all_bad(COURSE)
GROUP = pytest.mark.xdist_group(ASSIGNMENT)     # shares grading_support.grade(ASSIGNMENT) with test_autograde.py
pytestmark = [pytest.mark.sandbox, pytest.mark.e2e]


@dataclass
class Batch:
    class_dir: Path
    run: object
    scores: dict[str, dict[str, float | None]]     # student -> {notebook/grade id: score}


_KEEP = []


@functools.cache
def batch() -> Batch:
    tmp = tempfile.TemporaryDirectory(prefix="grade-batch-")
    _KEEP.append(tmp)
    class_dir = Path(tmp.name)
    source = cells.read(COURSE.source_notebook(ASSIGNMENT))
    release = cells.read(COURSE.release_notebook(ASSIGNMENT))
    answers = reference_answers(source)
    submit(class_dir, ASSIGNMENT, "reference", with_answers(release, answers))
    submit(class_dir, ASSIGNMENT, "untouched", release)
    first_wrong = {}
    for wrong in wrong_answers(ASSIGNMENT):
        first_wrong.setdefault(wrong.exercise, wrong.code)
    submit(class_dir, ASSIGNMENT, "wrong0", with_answers(release, answers | first_wrong))
    paths = {"SOURCE_NOTEBOOK": str(COURSE.source_notebook(ASSIGNMENT)),
             "REFERENCE_NOTEBOOK": str(COURSE.reference_notebook(ASSIGNMENT)),
             "GRADEBOOK": str(class_dir / "gradebook.db")}
    for bad in BAD:
        submit_bad(bad, class_dir, ASSIGNMENT, release, answers, paths)
    # 60 s a cell, nbgrader's own: leaves_processes.py forks its torch-sized kernel 200 times, which took over
    # 15 s on the loaded 2-core machine (50 forks in 15 s); the endless loop pays for it.
    run = grade(COURSE, class_dir, [ASSIGNMENT], GradeOptions(jobs=2, limits=Limits(cell_timeout=60)),
                say=lambda *a, **k: None)
    return Batch(class_dir, run, cell_scores(f"sqlite:///{class_dir / 'gradebook.db'}", ASSIGNMENT))


def _tests(scores: dict[str, float | None]) -> list[str]:
    return [key.split("/")[-1] for key in scores]


@GROUP
def test_the_batch_grades_every_submission():
    b = batch()
    students = {p.name for p in (b.class_dir / "submitted").iterdir()}
    assert set(b.scores) == students
    assert not [line for line in b.run.report.splitlines() if " / grader: " in line], b.run.report
    assert (b.class_dir / "grades.csv").read_text().count(ASSIGNMENT) == len(students)


@GROUP
@pytest.mark.parametrize("student", HONEST)
def test_honest_grades_equal_plain_nbgrader(student):
    """The same cell scores as `nbgrader autograde` of the same notebook, graded in a class of its own."""
    ours = {key.split("/")[-1]: score for key, score in batch().scores[student].items()}
    theirs = {name: score for name, (score, _) in plain_nbgrader(ASSIGNMENT).scores[student].items()}
    assert ours == theirs
    assert not report_lines(batch().run.report, student), "an honest submission was reported"


@GROUP
@pytest.mark.parametrize("bad", [pytest.param(b, id=b.name) for b in BAD])
def test_bad_submission_is_graded_and_reported(bad):
    b = batch()
    lines = report_lines(b.run.report, bad.name)
    for pattern in bad.expect:
        assert matches(pattern, lines), f"{bad.name}: no report line matches {pattern!r}:\n" + "\n".join(lines)
    full = {key.split("/")[-1]: score for key, score in b.scores["reference"].items()}
    got = {key.split("/")[-1]: score for key, score in b.scores[bad.name].items()}
    zero = bad.zero_tests(list(full))
    assert {t: got[t] for t in zero} == {t: 0.0 for t in zero}, f"{bad.name}: these tests should score zero"
    assert {t: got[t] for t in full if t not in zero} == {t: s for t, s in full.items() if t not in zero}, \
        f"{bad.name}: the cells it did not break should keep their points"


@GROUP
def test_student_code_could_not_touch_the_gradebook():
    """misbehaves.py ran UPDATE grade SET auto_score = 100 on the real gradebook's path."""
    with sqlite3.connect(batch().class_dir / "gradebook.db") as db:
        assert db.execute("SELECT count(*) FROM grade WHERE auto_score >= 100").fetchone() == (0,)


@GROUP
def test_feedback_never_shows_hidden_tests():
    secret = secret_lines(ASSIGNMENT)
    assert secret
    pages = sorted((batch().class_dir / "feedback").rglob("*.html"))
    assert len(pages) >= len(HONEST)
    for page in pages:
        leaked = sorted(secret & shown_lines(page.read_text()))
        assert not leaked, f"{page}: hidden test code in the feedback: {leaked[:3]}"


@GROUP
def test_feedback_is_held_back_where_cells_look_like_tampering():
    b = batch()
    for bad in BAD:
        flagged = any(TAMPERING in line for line in report_lines(b.run.report, bad.name))
        written = (b.class_dir / "feedback" / bad.name).is_dir()
        assert not (flagged and written), f"{bad.name}: feedback written although cells look like tampering"
    assert (b.class_dir / "feedback" / "reuses_builtin_names").is_dir(), "an honest notebook gets its feedback"


@GROUP
def test_hidden_tests_cannot_be_read_back_from_the_kernel():
    """reads_past_cells.py printed the kernel's copies of the cells before it, encoded (see its Bad: line).

    Its feedback is held back (the scan flags it), so the outputs are read from the
    autograded notebook, which is what the feedback would show.
    """
    graded = next((batch().class_dir / "autograded" / "reads_past_cells").rglob("*.ipynb"))
    printed = "".join(output.get("text", "") for cell in cells.read(graded).cells if cell.cell_type == "code"
                      for output in cell.get("outputs", []))
    leaks = dict(re.findall(r"LEAK (\w+) ([A-Za-z0-9+/=]+)", printed))
    assert {"In", "raw", "history_rows", "_i", "linecache"} <= set(leaks), \
        f"the submission did not print what it read: {list(leaks)}"
    read_back = {label: zlib.decompress(base64.b64decode(blob)).decode() for label, blob in leaks.items()}
    assert "def broadcast_shape" in read_back["In"], "In should still hold the student's own cells"
    secret = secret_lines(ASSIGNMENT)
    for label, text in read_back.items():
        shown = {line.strip() for line in text.splitlines()}
        assert not secret & shown, f"hidden test code read back from {label}: {sorted(secret & shown)[:3]}"


@GROUP
def test_grading_again_changes_nothing():
    b = batch()
    again = grade(COURSE, b.class_dir, [ASSIGNMENT], GradeOptions(jobs=2), say=lambda *a, **k: None)
    assert not again.graded and len(again.skipped) == len(b.scores)
    assert cell_scores(f"sqlite:///{b.class_dir / 'gradebook.db'}", ASSIGNMENT) == b.scores
    assert again.problems == b.run.problems
