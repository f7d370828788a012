"""Plain nbgrader's grades of the kept answers, recorded against everything they depend on.

The suite grades every kept answer with plain `nbgrader autograde`: tests/e2e/test_autograde.py checks that each
wrong one loses points and each right one keeps them, tests/e2e/test_verdicts.py and tests/e2e/test_grade_batch.py
that `course grade` gives the same scores cell by cell. Plain nbgrader's run of those 112 submissions was a quarter
of the suite's time (769 s of the two workers' 2 x 1,456 s in `.ci/run` at faa5402, on the 2-core build machine),
and what it gives depends only on its inputs: the instructor's notebook, the kept answers, the helpers the notebook
imports, the course code that builds the submissions and configures nbgrader, and the Python and packages that run
it. A run with COURSE_PLAIN_RECORD=1 writes what plain nbgrader gave into RECORDS, under a key over all of them
(`key`); a run whose key is the same reads it back, and any other run grades for real (COURSE_PLAIN_LIVE=1 always
does). The submissions are handed in either way: `course grade` grades those very files.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

from course.checkout import Course
from course.submissions import answers
from course.submissions.answers import GradedAssignment

RECORDS = Path(__file__).resolve().parent / "recorded"
# What plain nbgrader's grading reads, below a checkout's root. The course code is the closure of what
# course.submissions.answers and nbgrader's plugins (course.plugins, loaded by nbgrader_config.py) import:
# tests/repository/test_plain_record.py checks that it stays so. course.grading is not in it: plain nbgrader never
# runs it.
SHARED_INPUTS = ("nbgrader_config.py", "release/nbgrader_config.py", "helpers", "course/__init__.py",
                 "course/checkout.py", "course/submissions", "course/notebook", "course/plugins")
ASSIGNMENT_INPUTS = ("source/{}", "fixtures/wrong_answers/{}", "fixtures/right_answers/{}")
OWN_DISTRIBUTION = "pytorch-course-section10"


def key(course: Course, assignment: str) -> str | None:
    """A hash of every input of plain nbgrader's grading of `assignment`'s kept answers; None where nbgrader's
    kernels would not run this checkout's code with this Python (no record can vouch for what they give)."""
    environment = _environment()
    root = course.root.resolve()
    if environment["python"] != sys.executable or not all(Path(p).resolve().is_relative_to(root)
                                                          for p in environment["packages"]):
        return None
    digest = hashlib.sha256()
    for relative, path in _files(course.root, [*SHARED_INPUTS, *(p.format(assignment) for p in ASSIGNMENT_INPUTS)]):
        data = path.read_bytes()
        digest.update(f"{relative}\0{len(data)}\0".encode())
        digest.update(data)
    digest.update(f"{sys.version}\0{platform.machine()}\0{platform.system()}\0".encode())
    for name, version in sorted(environment["distributions"].items()):
        digest.update(f"{name}=={version}\0".encode())
    for config in environment["configs"]:      # none in a fresh setup: then the key is as without this loop
        data = Path(config).read_bytes()
        digest.update(f"{config}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


# Run where nbgrader runs, outside the checkout: the installed distributions, listed before anything is imported
# (a process that has imported nbgrader sees setuptools' vendored ones too: the list would depend on what the
# caller imported), which course and helpers a kernel imports, which Python the python3 kernelspec starts
# (jupyter_client puts its own Python for a bare "python"), and the configuration of one's own that nbgrader and
# every kernel read (nbgrader_config on the Jupyter paths, the IPython profile).
_PROBE = """
import glob, importlib.metadata, json, os, shutil, sys
distributions = {}
for dist in importlib.metadata.distributions():
    name = (dist.metadata["Name"] or "").lower().replace("_", "-")
    if name and name != sys.argv[1]:    # this course's own: its code is hashed file by file
        distributions.setdefault(name, dist.version)
import course, helpers
from IPython.paths import get_ipython_dir
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_core.paths import jupyter_config_path
argv0 = KernelSpecManager().get_kernel_spec("python3").argv[0]
bare = argv0 in ("python", "python%i" % sys.version_info[0], "python%i.%i" % sys.version_info[:2])
profile = os.path.join(get_ipython_dir(), "profile_default")
configs = [os.path.join(d, "nbgrader_config" + x) for d in jupyter_config_path() for x in (".py", ".json")]
configs += sorted(p for x in ("*.py", "*.ipy") for p in glob.glob(os.path.join(profile, "startup", x)))
configs += [os.path.join(profile, n) for n in ("ipython_config.py", "ipython_kernel_config.py")]
print(json.dumps({"distributions": distributions, "packages": [course.__file__, helpers.__file__],
                  "python": sys.executable if bare else os.path.abspath(shutil.which(argv0) or argv0),
                  "configs": [c for c in configs if os.path.isfile(c)]}))
"""


@functools.cache
def _environment() -> dict:
    with tempfile.TemporaryDirectory() as elsewhere:
        probe = subprocess.run([sys.executable, "-c", _PROBE, OWN_DISTRIBUTION], cwd=elsewhere,
                               capture_output=True, text=True, timeout=300, check=True)
    return json.loads(probe.stdout)


def grade(course: Course, assignment: str) -> GradedAssignment:
    """Plain nbgrader's grades of `assignment`'s kept answers: from its record where the key is the same."""
    handed_in = answers.hand_in(course, assignment)
    path = RECORDS / f"{assignment}.json"
    current = key(course, assignment)
    if current and not os.environ.get("COURSE_PLAIN_LIVE") and path.is_file():
        record = json.loads(path.read_text())
        if record["key"] == current:
            scores = {student: {cell: tuple(pair) for cell, pair in cells.items()}
                      for student, cells in record["scores"].items()}
            return dataclasses.replace(handed_in, scores=scores, notes=record["failures"])
    graded = answers.autograde(handed_in)
    if current and os.environ.get("COURSE_PLAIN_RECORD"):
        RECORDS.mkdir(exist_ok=True)
        path.write_text(json.dumps({
            "key": current,
            "made_with": f"Python {platform.python_version()}, " + ", ".join(
                f"{name} {_environment()['distributions'].get(name)}" for name in ("nbgrader", "torch", "ipykernel")),
            "scores": graded.scores,
            "failures": {student: graded.failures(student) for student in graded.scores},
        }, indent=1, sort_keys=True) + "\n")
    return graded


def fresh(course: Course) -> list[str]:
    """The assignments whose record matches this checkout and Python (what a run reads instead of grading)."""
    found = []
    for assignment in course.assignments():
        path = RECORDS / f"{assignment}.json"
        if path.is_file() and json.loads(path.read_text())["key"] == (key(course, assignment) or "none"):
            found.append(assignment)
    return found


def _files(root: Path, names: list[str]):
    for name in names:
        top = root / name
        paths = [top] if top.is_file() else sorted(top.rglob("*")) if top.is_dir() else []
        for path in paths:
            if path.is_file() and "__pycache__" not in path.parts and ".ipynb_checkpoints" not in path.parts:
                yield path.relative_to(root).as_posix(), path

