"""One small demo class, made and graded by `course demo` once per test process, for the browser tests of
the class report and of formgrader (both in one xdist group, so one worker grades it once).

The first assignment, four students: `ada` the reference answers (full marks), `cy` the release untouched,
`eve` realistic wrong answers and a cell that replaces the checks, `ivy` a file that is not JSON. A test
that changes the class (grades by hand, regrades, deletes the page) works on its own copy (`copy_of`).
"""

import functools
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

import course.tools.demo
from course.grading.contract import GradeOptions
from course.grading.sandbox.policy import Limits
from grading_support import COURSE

ASSIGNMENT = COURSE.assignments()[0]
STUDENTS = ("ada", "cy", "eve", "ivy")
_KEEP = []


@dataclass(frozen=True)
class GradedDemo:
    folder: Path            # as `course demo` left it; never changed by a test
    said: list[str]         # what `course demo` printed, one entry a call
    run: object             # what `course grade` returned to it (course.grading.batch.GradeRun)


@functools.cache
def graded_demo() -> GradedDemo:
    tmp = tempfile.TemporaryDirectory(prefix="demo-class-")
    _KEEP.append(tmp)
    folder = Path(tmp.name) / "demo"
    said, runs = [], []
    make, grade = course.tools.demo.make_demo_class, course.tools.demo.grade

    def small(course_, where):
        return make(course_, where, [ASSIGNMENT], STUDENTS)

    def kept(*args, **kwargs):
        runs.append(grade(*args, **kwargs))
        return runs[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(course.tools.demo, "make_demo_class", small)
        patch.setattr(course.tools.demo, "grade", kept)
        code = course.tools.demo.demo(COURSE, folder, GradeOptions(jobs=2, limits=Limits()),
                                say=lambda *args, **kwargs: said.append(" ".join(map(str, args))))
    assert code == 0, said
    return GradedDemo(folder, said, runs[0])


def copy_of(demo: GradedDemo, where: Path) -> Path:
    """A copy of the graded class at `where` (a class folder may move: its nbgrader_config.py finds its root)."""
    shutil.copytree(demo.folder, where, symlinks=True)
    return where
