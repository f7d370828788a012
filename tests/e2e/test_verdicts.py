"""`course grade` decides every test cell outside the student's kernel (course/grading/verdicts/) and still
gives plain `nbgrader autograde`'s scores, cell by cell, for every honest, wrong and right answer in fixtures/.

The submissions are the very ones course.submissions.answers grades with plain nbgrader (reference,
reference without the demonstrations, untouched release, every wrong answer of fixtures/wrong_answers/ and
every right one of fixtures/right_answers/),
so each assignment's plain run is shared with test_autograde.py by staying in its xdist group.
"""

import functools
import shutil
import tempfile
from pathlib import Path

import pytest
from grading_support import COURSE, grade as plain_nbgrader

from course.grading.gradebooks import cell_scores
from course.grading.batch import grade
from course.grading.contract import GradeOptions

ASSIGNMENTS = COURSE.assignments()
pytestmark = [pytest.mark.sandbox, pytest.mark.e2e]
_KEEP = []


@functools.cache
def outside(assignment: str) -> dict[str, dict[str, float | None]]:
    """{student: {grade id: score}} from `course grade` on the submissions plain nbgrader graded."""
    plain = plain_nbgrader(assignment)
    tmp = tempfile.TemporaryDirectory(prefix=f"verdicts-{assignment}-")
    _KEEP.append(tmp)
    class_dir = Path(tmp.name)
    shutil.copytree(plain.autograded.parent / "submitted", class_dir / "submitted")
    grade(COURSE, class_dir, [assignment], GradeOptions(jobs=2), say=lambda *a, **k: None)
    scores = cell_scores(f"sqlite:///{class_dir / 'gradebook.db'}", assignment)
    return {student: {key.split("/")[-1]: score for key, score in cells.items()} for student, cells in scores.items()}


@pytest.mark.parametrize("assignment", [pytest.param(a, marks=pytest.mark.xdist_group(a), id=a) for a in ASSIGNMENTS])
def test_scores_equal_plain_nbgrader_cell_by_cell(assignment):
    plain = plain_nbgrader(assignment)
    ours = outside(assignment)
    assert set(ours) == set(plain.scores), "the students graded"
    differences = [f"{student} {cell}: plain nbgrader {score}, course grade {ours[student].get(cell)}"
                   for student, cells in sorted(plain.scores.items()) for cell, (score, _) in cells.items()
                   if ours[student].get(cell) != score]
    wrong_of = {student: [w for w, s in plain.wrong_student.items() if s == student] for student in plain.scores}
    assert not differences, "\n".join(f"{d} (answers: {', '.join(wrong_of[d.split()[0]]) or 'reference'})"
                                      for d in differences)
