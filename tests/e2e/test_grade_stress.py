"""Stress: every hostile submission in fixtures/bad_submissions/, each followed on the same worker by an honest
one: every honest submission gets full marks and is never reported.

The hostile code is what each recipe runs in its kernel (its answers and extra cells, each in a cell of its
own), handed in as extra cells of the tiny course of test_grade_mechanics, so that the honest submission that
follows is cheap to grade. Recipes that only edit the notebook (corrupt it, rename it, delete cells) run no
code, so they cannot reach the next submission. One worker (`--jobs 1`), so that the order of grading is the
order of the names: hostile, honest, hostile, honest, ...
"""

import os

import pytest
from grading_support import COURSE

from course.submissions.bad import all_bad
from e2e.test_grade_mechanics import CORRECT, MINI, _scores, hand_in, mini_course

from course.grading.batch import grade
from course.grading.contract import GradeOptions
from course.grading.sandbox.policy import Limits

# One round: each hostile recipe runs right before an honest submission on the same worker, which is what
# is tested; a second round of the same pairs doubled the test's 6 minutes and found nothing the first missed.
ROUNDS = 1
# The sleeping processes leaves_processes.py starts, renamed here so that the test finds only its own.
SLEEP, OWN_SLEEP = '["sleep", "120"]', '["sleep", "314.159"]'
HOSTILE = [bad for bad in all_bad(COURSE) if any(kind in ("after", "replace") for kind, _, _ in bad.sections)]
pytestmark = [pytest.mark.xdist_group("grade-stress"), pytest.mark.sandbox, pytest.mark.e2e]


def hostile_cells(bad, paths: dict[str, str]) -> list[str]:
    """The code `bad` runs in its kernel (its extra cells and its answers), one cell each, after the imports
    of the course's setup cells: a SystemExit or a crash in one does not keep the others from running."""
    cells = ["import torch\nfrom torch import nn\nimport helpers.checks"]
    for kind, _, code in bad.sections:
        if kind in ("after", "replace"):
            for key, value in paths.items():
                code = code.replace(f"${key}", value)
            cells.append(code.replace(SLEEP, OWN_SLEEP))
    return cells


def _own_sleepers() -> list[int]:
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if f.read() == b"sleep\x00314.159\x00":
                    found.append(int(entry))
        except OSError:
            pass
    return found


def test_every_honest_submission_after_every_hostile_one_gets_full_marks(tmp_path):
    assert any(SLEEP in code for bad in HOSTILE for _, _, code in bad.sections), "leaves_processes.py changed"
    course = mini_course(tmp_path / "course")
    class_dir = tmp_path / "class"
    paths = {"SOURCE_NOTEBOOK": str(course.source_notebook(MINI)),
             "REFERENCE_NOTEBOOK": str(course.source_notebook(MINI)),
             "GRADEBOOK": str(class_dir / "gradebook.db")}
    honest = []
    for r in range(ROUNDS):
        for i, bad in enumerate(HOSTILE):
            hand_in(class_dir, course, f"r{r}_{i:02d}a_{bad.name}", CORRECT, extra=hostile_cells(bad, paths))
            hand_in(class_dir, course, f"r{r}_{i:02d}b_honest", CORRECT)
            honest.append(f"r{r}_{i:02d}b_honest")
    run = grade(course, class_dir, [MINI], GradeOptions(jobs=1, limits=Limits(cell_timeout=10)),
                say=lambda *a, **k: None)
    scores = _scores(class_dir)
    assert {s: scores.get(s) for s in honest} == {s: 1.0 for s in honest}, run.report
    reported = [line for line in run.report.splitlines() if "_honest /" in line]
    assert not reported, "\n".join(reported)
    assert not run.ungraded, run.ungraded
    assert not _own_sleepers(), "processes a hostile submission started outlived its grading"
