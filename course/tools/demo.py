"""`course demo`: a small class made from the course itself, graded with `course grade`.

For every assignment in source/, three students hand in: `ada` the reference answers,
`ben` the first half of them, `cy` the release untouched. Five more hand in one bad
notebook each, spread over the assignments: `eve` gives realistic wrong answers
(fixtures/wrong_answers/) and replaces the checks the tests use, `fay` tries to read
the hidden tests, write the gradebook and reach the network, `gus` loops forever, `hal`
kills its kernel with os._exit, `ivy` hands in a file that is not JSON. The demo folder
is made afresh each time, as a class a TA opens in formgrader as it is (`jupyter lab` in it):
its own nbgrader_config.py (the course's, with the folder as the course root), source/ and
release/, and a roster that gives the students names.
"""

from __future__ import annotations

import copy
import csv
import shutil
import sys
from pathlib import Path

import nbformat

from course.checkout import Course
from course.submissions import reference_answers, with_answers
from course.submissions.answers import first_wrong_answers
from course.grading import gradebooks
from course.grading.batch import grade
from course.grading.contract import GradeOptions
from course.notebook import cells
from course.notebook.classdir import ClassDir

HONEST = ("ada", "ben", "cy")
BAD = ("eve", "fay", "gus", "hal", "ivy")
# The infinite loop need not cost a minute; the slowest honest cell (05's DDP demo) took 6.7 s alone on the
# 2-core build machine, and the demo grades two notebooks at once.
DEMO_CELL_TIMEOUT = 30
ROSTER = {"ada": ("Ada", "Byron"), "ben": ("Ben", "Okafor"), "cy": ("Cy", "Tanaka"), "eve": ("Eve", "Moreau"),
          "fay": ("Fay", "Novak"), "gus": ("Gus", "Larsen"), "hal": ("Hal", "Ibsen"), "ivy": ("Ivy", "Chen")}
ROSTER_NAME = "roster.csv"

# The class's nbgrader_config.py: formgrader, started in the class folder, reads it.
CLASS_CONFIG = '''"""nbgrader settings of this demo class: the course's own, with this folder as the course root."""
import os

c = get_config()  # noqa: F821 (provided by traitlets)
load_subconfig({course_config!r})  # noqa: F821
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
'''

NO_SANDBOX_HERE = (
    "course demo: student code runs in a bubblewrap sandbox, and bubblewrap exists on Linux only "
    "(this is {platform}). Run the demo on a Linux machine or in a Linux virtual machine or container "
    "(e.g. `docker run -it --privileged -v \"$PWD\":/course -w /course python:3.11 ./setup.sh`), "
    "or here with `course demo --allow-unsandboxed`: the demo's own bad submissions then run with your "
    "rights (they try to read the course's files, write the gradebook and reach the network).")


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


def make_demo_class(course: Course, folder: Path, assignments: list[str] | None = None,
                    students: tuple[str, ...] = HONEST + BAD) -> list[str]:
    """Write the demo class under `folder`: its course files, roster and the submissions of
    `students` for `assignments` (default: all); returns the assignments used."""
    if folder.exists():
        shutil.rmtree(folder)
    assignments = assignments or course.assignments()
    write_class_files(course, folder, assignments)
    with open(folder / ROSTER_NAME, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "first_name", "last_name"])
        writer.writerows([student, *ROSTER[student]] for student in students)
    for assignment in assignments:
        release = cells.read(course.release_notebook(assignment))
        answers = reference_answers(cells.read(course.source_notebook(assignment)))
        exercises = list(answers)
        half = {e: answers[e] for e in exercises[: max(1, len(exercises) // 2)]}
        for student, nb in (("ada", with_answers(release, answers)), ("ben", with_answers(release, half)),
                            ("cy", release)):
            if student in students:
                _submit(folder, student, assignment, nb)
    for k, student in enumerate(s for s in BAD if s in students):
        assignment = assignments[k % len(assignments)]
        release = cells.read(course.release_notebook(assignment))
        answers = reference_answers(cells.read(course.source_notebook(assignment)))
        full = with_answers(release, answers)
        if student == "eve":
            wrong = with_answers(release, answers | first_wrong_answers(course, assignment))
            _submit(folder, student, assignment, _insert_after_setup(wrong, [cheat_cell()]))
        elif student == "fay":
            _submit(folder, student, assignment, _insert_after_setup(full, snoop_cells(course, assignment)))
        elif student == "gus":
            _submit(folder, student, assignment, _insert_after_setup(full, ["while True:\n    pass"]))
        elif student == "hal":
            _submit(folder, student, assignment, _insert_after_setup(full, ["import os\nos._exit(1)"]))
        else:
            path = ClassDir(folder).submitted(student, assignment) / f"{assignment}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(nbformat.writes(full).encode()[:2000])     # cut off mid-way: not JSON
    return assignments


def write_class_files(course: Course, folder: Path, assignments: list[str]) -> None:
    """What formgrader needs in a class folder: nbgrader_config.py loading the course's, source/, release/."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "nbgrader_config.py").write_text(CLASS_CONFIG.format(course_config=str(course.config)))
    ignore = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")
    for assignment in assignments:
        shutil.copytree(course.source_dir(assignment), folder / "source" / assignment, ignore=ignore)
        shutil.copytree(course.release_dir(assignment), folder / "release" / assignment, ignore=ignore)


def demo(course: Course, folder: Path, options: GradeOptions, say=print) -> int:
    folder = folder.resolve()
    if not sys.platform.startswith("linux") and not options.allow_unsandboxed:
        say(NO_SANDBOX_HERE.format(platform=sys.platform), file=sys.stderr)
        return 2
    say(f"making a demo class in {folder} ...", flush=True)
    assignments = make_demo_class(course, folder)
    gradebooks.import_roster(ClassDir(folder).db_url, folder / ROSTER_NAME)
    if options.limits.cell_timeout is None:
        from dataclasses import replace
        options = replace(options, limits=replace(options.limits, cell_timeout=DEMO_CELL_TIMEOUT))
    n = sum(1 for _ in ClassDir(folder).submitted().glob("*/*"))
    say(f"grading {n} submissions of {len(assignments)} assignment(s) with {options.jobs} job(s) ...", flush=True)
    run = grade(course, folder, assignments, options, say=say)
    say(run.table)
    say("")
    say(run.report)
    say(f"\nthe demo class: {folder} (gradebook.db, grades.csv, autograded/, feedback/, grading_report.txt)")
    say(f"open it in formgrader: cd {folder} && jupyter lab, then Nbgrader > Formgrader")
    from course.grading.class_report.html import write_after_grading
    page = write_after_grading(folder, assignments, say)
    if page:
        say(f"what the class got wrong, per exercise and test (open it in a browser): {page}")
    return 0


def _submit(folder: Path, student: str, assignment: str, nb) -> None:
    path = ClassDir(folder).submitted(student, assignment) / f"{assignment}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))


def _insert_after_setup(nb, sources: list[str]):
    """A copy of `nb` with new student code cells right after its first code cell (the setup cell)."""
    nb = copy.deepcopy(nb)
    first = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    for offset, source in enumerate(sources, 1):
        nb.cells.insert(first + offset, nbformat.v4.new_code_cell(source))
    return nb
