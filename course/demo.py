"""`course demo`: a small class made from the course itself, graded with `course grade`.

For every assignment in source/, three students hand in: `ada` the reference answers,
`ben` the first half of them, `cy` the release untouched. Five more hand in one bad
notebook each, spread over the assignments: `eve` gives realistic wrong answers
(tests/wrong_answers/) and replaces the checks the tests use, `fay` tries to read
the hidden tests, write the gradebook and reach the network, `gus` loops forever, `hal`
kills its kernel with os._exit, `ivy` hands in a file that is not JSON. The demo folder
is made afresh each time.
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import nbformat

from . import cells
from .grade import GradeOptions, grade
from .paths import Course
from .submissions import reference_answers, with_answers

HONEST = ("ada", "ben", "cy")
BAD = ("eve", "fay", "gus", "hal", "ivy")
DEMO_CELL_TIMEOUT = 10     # the infinite loop need not cost a minute


def cheat_cell() -> str:
    return ("# Make every check pass.\n"
            "import torch\n"
            "import helpers.checks\n"
            "for _name in dir(helpers.checks):\n"
            "    if _name.startswith('check_'):\n"
            "        setattr(helpers.checks, _name, lambda *args, **kwargs: None)\n"
            "torch.allclose = lambda *args, **kwargs: True\n")


def snoop_cells(course: Course, assignment: str) -> list[str]:
    source = course.source_notebook(assignment)
    return [f"print(open({str(source)!r}).read()[:200])  # the instructor's notebook, by its real path",
            f"print(open('../../../source/{assignment}/{assignment}.ipynb').read()[:200])  # or next to the submission",
            "import sqlite3\nsqlite3.connect('../../../gradebook.db').execute('CREATE TABLE cheat (x)')",
            "import urllib.request\nurllib.request.urlopen('https://pypi.org', timeout=5)"]


def make_demo_class(course: Course, folder: Path) -> list[str]:
    """Write the demo class's submissions under `folder`; returns the assignments used."""
    if folder.exists():
        shutil.rmtree(folder)
    assignments = course.assignments()
    for assignment in assignments:
        release = cells.read(course.release_notebook(assignment))
        answers = reference_answers(cells.read(course.source_notebook(assignment)))
        exercises = list(answers)
        half = {e: answers[e] for e in exercises[: max(1, len(exercises) // 2)]}
        _submit(folder, "ada", assignment, with_answers(release, answers))
        _submit(folder, "ben", assignment, with_answers(release, half))
        _submit(folder, "cy", assignment, release)
    for k, student in enumerate(BAD):
        assignment = assignments[k % len(assignments)]
        release = cells.read(course.release_notebook(assignment))
        answers = reference_answers(cells.read(course.source_notebook(assignment)))
        full = with_answers(release, answers)
        if student == "eve":
            wrong = with_answers(release, answers | wrong_answers(course, assignment))
            _submit(folder, student, assignment, _insert_after_setup(wrong, [cheat_cell()]))
        elif student == "fay":
            _submit(folder, student, assignment, _insert_after_setup(full, snoop_cells(course, assignment)))
        elif student == "gus":
            _submit(folder, student, assignment, _insert_after_setup(full, ["while True:\n    pass"]))
        elif student == "hal":
            _submit(folder, student, assignment, _insert_after_setup(full, ["import os\nos._exit(1)"]))
        else:
            path = folder / "submitted" / student / assignment / f"{assignment}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(nbformat.writes(full).encode()[:2000])     # cut off mid-way: not JSON
    return assignments


def demo(course: Course, folder: Path, options: GradeOptions, say=print) -> int:
    folder = folder.resolve()
    say(f"making a demo class in {folder} ...", flush=True)
    assignments = make_demo_class(course, folder)
    if options.limits.cell_timeout is None:
        from dataclasses import replace
        options = replace(options, limits=replace(options.limits, cell_timeout=DEMO_CELL_TIMEOUT))
    n = sum(1 for _ in (folder / "submitted").glob("*/*"))
    say(f"grading {n} submissions of {len(assignments)} assignment(s) with {options.jobs} job(s) ...", flush=True)
    run = grade(course, folder, assignments, options, say=say)
    say(run.table)
    say("")
    say(run.report)
    say(f"\nthe demo class: {folder} (gradebook.db, grades.csv, autograded/, feedback/, grading_report.txt)")
    return 0


def _submit(folder: Path, student: str, assignment: str, nb) -> None:
    path = folder / "submitted" / student / assignment / f"{assignment}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))


def wrong_answers(course: Course, assignment: str) -> dict[str, str]:
    """The first realistic wrong answer of each exercise kept in tests/wrong_answers/, if any."""
    found: dict[str, str] = {}
    for path in sorted((course.root / "tests" / "wrong_answers" / assignment).glob("*__*.py")):
        found.setdefault(path.name.split("__")[0], path.read_text())
    return found


def _insert_after_setup(nb, sources: list[str]):
    """A copy of `nb` with new student code cells right after its first code cell (the setup cell)."""
    nb = copy.deepcopy(nb)
    first = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    for offset, source in enumerate(sources, 1):
        nb.cells.insert(first + offset, nbformat.v4.new_code_cell(source))
    return nb
