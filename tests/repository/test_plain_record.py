"""tests/plain_record.py: plain nbgrader's grades are read from a record only while nothing they depend on changed."""

import json
import platform
import shutil
import subprocess
import sys
import types
from pathlib import Path

import plain_record
import pytest
from grading_support import COURSE, ROOT

from course.checkout import Course
from course.submissions import answers
from course.submissions.answers import GradedAssignment

ASSIGNMENT = "01_tensors_devices"


def test_the_course_code_plain_nbgrader_runs_is_all_in_the_key():
    # nbgrader_config.py loads course.plugins.rules, which names the other plugins; answers builds the submissions.
    code = ("import importlib, json, pkgutil, sys, course.plugins, course.submissions.answers\n"
            "for m in pkgutil.walk_packages(course.plugins.__path__, 'course.plugins.'):\n"
            "    importlib.import_module(m.name)\n"
            "print(json.dumps(sorted(m.__file__ for n, m in sys.modules.items()"
            " if n.split('.')[0] == 'course' and getattr(m, '__file__', None))))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                                       check=True).stdout)
    hashed = {path for _, path in plain_record._files(ROOT, list(plain_record.SHARED_INPUTS))}
    assert loaded and {Path(p).resolve() for p in loaded} <= {p.resolve() for p in hashed}


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A copy of what the key reads for ASSIGNMENT, plus a course.grading module, whose kernels (as the probe
    of nbgrader's environment reports them) import its own course and helpers."""
    root = tmp_path / "checkout"
    for name in [*plain_record.SHARED_INPUTS, *(p.format(ASSIGNMENT) for p in plain_record.ASSIGNMENT_INPUTS),
                 "course/grading/__init__.py"]:
        source, target = ROOT / name, root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        elif source.is_file():
            shutil.copy2(source, target)
    environment = plain_record._environment() | {
        "packages": [str(root / "course/__init__.py"), str(root / "helpers/__init__.py")], "configs": []}
    monkeypatch.setattr(plain_record, "_environment", lambda: environment)
    return Course(root)


# What plain nbgrader's grading reads, said here again on purpose: a key that left one out would pass otherwise.
INPUTS = ["nbgrader_config.py", "release/nbgrader_config.py", "helpers/checks.py", "helpers/selfcheck_data",
          "course/__init__.py", "course/checkout.py", "course/submissions/answers.py", "course/notebook/cells.py",
          "course/plugins/rules.py", f"source/{ASSIGNMENT}/{ASSIGNMENT}.ipynb",
          f"fixtures/wrong_answers/{ASSIGNMENT}", f"fixtures/right_answers/{ASSIGNMENT}"]


@pytest.mark.parametrize("name", INPUTS)
def test_the_key_changes_with_any_input(checkout, name):
    before = plain_record.key(checkout, ASSIGNMENT)
    path = checkout.root / name
    if path.is_dir():
        path = next(p for p in sorted(path.rglob("*")) if p.is_file() and "__pycache__" not in p.parts)
    data = path.read_bytes()
    path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))          # one bit, the length kept
    assert plain_record.key(checkout, ASSIGNMENT) != before, name


def test_the_key_changes_with_python_packages_and_ones_own_configuration(checkout, monkeypatch, tmp_path):
    before = plain_record.key(checkout, ASSIGNMENT)
    environment = plain_record._environment()
    other = environment | {"distributions": environment["distributions"] | {"nbgrader": "0.0.1"}}
    monkeypatch.setattr(plain_record, "_environment", lambda: other)
    assert plain_record.key(checkout, ASSIGNMENT) != before
    monkeypatch.setattr(plain_record, "_environment", lambda: environment)
    monkeypatch.setattr(plain_record, "sys", types.SimpleNamespace(version=sys.version + " (another build)",
                                                                   executable=sys.executable))
    assert plain_record.key(checkout, ASSIGNMENT) != before
    monkeypatch.setattr(plain_record, "sys", sys)
    machine = platform.machine
    monkeypatch.setattr(platform, "machine", lambda: "another machine")
    assert plain_record.key(checkout, ASSIGNMENT) != before
    monkeypatch.setattr(platform, "machine", machine)
    assert plain_record.key(checkout, ASSIGNMENT) == before
    startup = tmp_path / "00-mine.py"
    startup.write_text("import torch\ntorch.manual_seed = lambda *a: None\n")
    environment = plain_record._environment() | {"configs": [str(startup)]}
    monkeypatch.setattr(plain_record, "_environment", lambda: environment)
    assert plain_record.key(checkout, ASSIGNMENT) not in (before, None)


def test_no_key_where_the_kernels_would_run_other_code(checkout, monkeypatch):
    environment = plain_record._environment()
    for other in ({"packages": [str(ROOT / "course/__init__.py"), environment["packages"][1]]},   # another checkout
                  {"python": "/usr/bin/python3-of-another-environment"}):
        monkeypatch.setattr(plain_record, "_environment", lambda other=other: environment | other)
        assert plain_record.key(checkout, ASSIGNMENT) is None


def test_the_key_stays_when_only_course_grades_code_bytecode_or_the_copy_changes(checkout, tmp_path):
    before = plain_record.key(checkout, ASSIGNMENT)
    (checkout.root / "course/grading/__init__.py").write_text("# changed\n")
    (checkout.root / "source/02_training_loop").mkdir(parents=True)
    (checkout.root / "source/02_training_loop/other.txt").write_text("another assignment's file\n")
    (checkout.root / "helpers/__pycache__").mkdir(exist_ok=True)
    (checkout.root / "helpers/__pycache__/checks.cpython-311.pyc").write_bytes(b"bytecode")
    assert plain_record.key(checkout, ASSIGNMENT) == before
    again = tmp_path / "copied-in-reverse"
    for path in sorted(checkout.root.rglob("*"), reverse=True):
        if path.is_file():
            (again / path.relative_to(checkout.root)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, again / path.relative_to(checkout.root))
    environment = plain_record._environment() | {
        "packages": [str(again / "course/__init__.py"), str(again / "helpers/__init__.py")]}
    plain_record._environment, saved = (lambda: environment), plain_record._environment
    try:
        assert plain_record.key(Course(again), ASSIGNMENT) == before
    finally:
        plain_record._environment = saved


def test_a_record_is_read_only_under_its_own_key(tmp_path, monkeypatch):
    handed_in = GradedAssignment(assignment=ASSIGNMENT, scores={}, test_ids={}, autograded=tmp_path / "autograded")
    graded_live = []

    def autograde(given):
        graded_live.append(given)
        return GradedAssignment(assignment=ASSIGNMENT, scores={"live": {"t": (1.0, 1.0)}}, test_ids={},
                                autograded=given.autograded, notes={"live": ""})

    monkeypatch.setattr(plain_record, "_environment", lambda: {
        "packages": [str(ROOT / "course/__init__.py"), str(ROOT / "helpers/__init__.py")], "python": sys.executable,
        "configs": [], "distributions": {"nbgrader": "0.9.6"}})
    monkeypatch.setattr(answers, "hand_in", lambda course, assignment: handed_in)
    monkeypatch.setattr(answers, "autograde", autograde)
    monkeypatch.setattr(plain_record, "RECORDS", tmp_path)
    monkeypatch.delenv("COURSE_PLAIN_LIVE", raising=False)
    monkeypatch.delenv("COURSE_PLAIN_RECORD", raising=False)
    record = {"key": plain_record.key(COURSE, ASSIGNMENT), "scores": {"kept": {"t": [0.0, 1.0]}},
              "failures": {"kept": "t: AssertionError"}}
    (tmp_path / f"{ASSIGNMENT}.json").write_text(json.dumps(record))

    read = plain_record.grade(COURSE, ASSIGNMENT)
    assert not graded_live and read.scores == {"kept": {"t": (0.0, 1.0)}}
    assert read.failures("kept") == "t: AssertionError"
    monkeypatch.setenv("COURSE_PLAIN_LIVE", "1")
    assert plain_record.grade(COURSE, ASSIGNMENT).scores == {"live": {"t": (1.0, 1.0)}} and len(graded_live) == 1
    monkeypatch.delenv("COURSE_PLAIN_LIVE")
    (tmp_path / f"{ASSIGNMENT}.json").write_text(json.dumps(record | {"key": "0" * 64}))
    assert plain_record.grade(COURSE, ASSIGNMENT).scores == {"live": {"t": (1.0, 1.0)}} and len(graded_live) == 2
    monkeypatch.setenv("COURSE_PLAIN_RECORD", "1")         # graded live, and recorded: the next run reads it
    assert plain_record.grade(COURSE, ASSIGNMENT).scores == {"live": {"t": (1.0, 1.0)}} and len(graded_live) == 3
    monkeypatch.delenv("COURSE_PLAIN_RECORD")
    assert plain_record.grade(COURSE, ASSIGNMENT).scores == {"live": {"t": (1.0, 1.0)}} and len(graded_live) == 3
    assert plain_record.fresh(COURSE) == [ASSIGNMENT]


@pytest.mark.slow
def test_the_key_is_the_same_whatever_the_process_that_asks_has_imported():
    # Importing nbgrader puts setuptools' vendored distributions on the path: they must not reach the key.
    code = ("import sys; sys.path.insert(0, 'tests'); import plain_record\n"
            "from pathlib import Path; from course.checkout import Course\n"
            "before = plain_record.key(Course(Path('.')), %r)\n"
            "import nbgrader.apps.autogradeapp\n"
            "plain_record._environment.cache_clear()\n"
            "print(before is not None and before == plain_record.key(Course(Path('.')), %r))"
            ) % (ASSIGNMENT, ASSIGNMENT)
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip() == "True"
