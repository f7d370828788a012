"""Plain nbgrader's grades of the kept answers, recorded against everything they depend on.

The suite grades every kept answer with plain `nbgrader autograde`: test_autograde.py checks that each wrong one
loses points and each right one keeps them, test_verdicts.py and test_grade_batch.py that `course grade` gives
the same scores cell by cell. Plain nbgrader's run of those 112 submissions was a quarter of the suite's time
(769 s of the two workers' 2 x 1,456 s in `.ci/run` at faa5402, on the 2-core build machine), and what it
gives depends only on its inputs: the instructor's
notebook, the kept answers, the helpers the notebook imports, the course code that builds the submissions and
configures nbgrader, and the Python and packages that run it. A run with COURSE_PLAIN_RECORD=1 writes what plain
nbgrader gave into RECORDS, under a key over all of them (`key`); a run whose key is the same reads it back,
and any other run grades for real (COURSE_PLAIN_LIVE=1 always does). The submissions are handed in either
way: `course grade` grades those very files.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import json
import os
import platform
import sys
from pathlib import Path

from course.checkout import Course
from course.fixtures import answers
from course.fixtures.answers import GradedAssignment

RECORDS = Path(__file__).resolve().parent / "recorded"
# What plain nbgrader's grading reads, below a checkout's root. The course code is the closure of what
# course.fixtures.answers and nbgrader's plugins (course.plugins, loaded by nbgrader_config.py) import:
# tests/test_plain_record.py checks that it stays so. course.grading is not in it: plain nbgrader never runs it.
SHARED_INPUTS = ("nbgrader_config.py", "release/nbgrader_config.py", "helpers", "course/__init__.py",
                 "course/checkout.py", "course/fixtures", "course/notebook", "course/plugins")
ASSIGNMENT_INPUTS = ("source/{}", "fixtures/wrong_answers/{}", "fixtures/right_answers/{}")
OWN_DISTRIBUTION = "pytorch-course-section10"    # its code is hashed file by file above


def key(course: Course, assignment: str) -> str:
    """A hash of every input of plain nbgrader's grading of `assignment`'s kept answers."""
    digest = hashlib.sha256()
    for relative, path in _files(course.root, [*SHARED_INPUTS, *(p.format(assignment) for p in ASSIGNMENT_INPUTS)]):
        data = path.read_bytes()
        digest.update(f"{relative}\0{len(data)}\0".encode())
        digest.update(data)
    digest.update(f"{sys.version}\0{platform.machine()}\0{platform.system()}\0".encode())
    for name, version in sorted(_distributions().items()):
        digest.update(f"{name}=={version}\0".encode())
    return digest.hexdigest()


def grade(course: Course, assignment: str) -> GradedAssignment:
    """Plain nbgrader's grades of `assignment`'s kept answers: from its record where the key is the same."""
    handed_in = answers.hand_in(course, assignment)
    path = RECORDS / f"{assignment}.json"
    current = key(course, assignment)
    if not os.environ.get("COURSE_PLAIN_LIVE") and path.is_file():
        record = json.loads(path.read_text())
        if record["key"] == current:
            scores = {student: {cell: tuple(pair) for cell, pair in cells.items()}
                      for student, cells in record["scores"].items()}
            return dataclasses.replace(handed_in, scores=scores, notes=record["failures"])
    graded = answers.autograde(handed_in)
    if os.environ.get("COURSE_PLAIN_RECORD"):
        RECORDS.mkdir(exist_ok=True)
        path.write_text(json.dumps({
            "key": current,
            "made_with": f"Python {platform.python_version()}, " + ", ".join(
                f"{name} {_distributions().get(name)}" for name in ("nbgrader", "torch", "ipykernel")),
            "scores": graded.scores,
            "failures": {student: graded.failures(student) for student in graded.scores},
        }, indent=1, sort_keys=True) + "\n")
    return graded


def fresh(course: Course) -> list[str]:
    """The assignments whose record matches this checkout and Python (what a run reads instead of grading)."""
    found = []
    for assignment in course.assignments():
        path = RECORDS / f"{assignment}.json"
        if path.is_file() and json.loads(path.read_text())["key"] == key(course, assignment):
            found.append(assignment)
    return found


def _files(root: Path, names: list[str]):
    for name in names:
        top = root / name
        paths = [top] if top.is_file() else sorted(top.rglob("*")) if top.is_dir() else []
        for path in paths:
            if path.is_file() and "__pycache__" not in path.parts and ".ipynb_checkpoints" not in path.parts:
                yield path.relative_to(root).as_posix(), path


def _distributions() -> dict[str, str]:
    found = {}
    for dist in importlib.metadata.distributions():
        name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if name and name != OWN_DISTRIBUTION:
            found.setdefault(name, dist.version)
    return found
