"""tests/plain_record.py: plain nbgrader's grades are read from a record only while nothing they depend on changed."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import plain_record
import pytest
from grading_support import COURSE, ROOT

from course.checkout import Course
from course.fixtures import answers
from course.fixtures.answers import GradedAssignment

ASSIGNMENT = "01_tensors_devices"


def test_the_course_code_plain_nbgrader_runs_is_all_in_the_key():
    # nbgrader_config.py loads course.plugins.nbgrader, which names the other plugins; answers builds the submissions.
    code = ("import importlib, json, pkgutil, sys, course.plugins, course.fixtures.answers\n"
            "for m in pkgutil.walk_packages(course.plugins.__path__, 'course.plugins.'):\n"
            "    importlib.import_module(m.name)\n"
            "print(json.dumps(sorted(m.__file__ for n, m in sys.modules.items()"
            " if n.split('.')[0] == 'course' and getattr(m, '__file__', None))))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                                       check=True).stdout)
    hashed = {path for _, path in plain_record._files(ROOT, list(plain_record.SHARED_INPUTS))}
    assert loaded and {Path(p).resolve() for p in loaded} <= {p.resolve() for p in hashed}


@pytest.fixture
def checkout(tmp_path):
    """A copy of what the key reads for ASSIGNMENT, plus a course.grading module."""
    for name in [*plain_record.SHARED_INPUTS, *(p.format(ASSIGNMENT) for p in plain_record.ASSIGNMENT_INPUTS),
                 "course/grading/__init__.py"]:
        source, target = ROOT / name, tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        elif source.is_file():
            shutil.copy2(source, target)
    return Course(tmp_path)


@pytest.mark.parametrize("changed", ["helpers/checks.py", f"fixtures/wrong_answers/{ASSIGNMENT}/new__one.py",
                                     "course/plugins/nbgrader.py", f"source/{ASSIGNMENT}/{ASSIGNMENT}.ipynb",
                                     "release/nbgrader_config.py"])
def test_the_key_changes_with_any_input(checkout, changed):
    before = plain_record.key(checkout, ASSIGNMENT)
    path = checkout.root / changed
    path.write_text((path.read_text() if path.exists() else "") + "\n# changed\n")
    assert plain_record.key(checkout, ASSIGNMENT) != before


def test_the_key_stays_when_only_course_grades_code_changes(checkout):
    before = plain_record.key(checkout, ASSIGNMENT)
    (checkout.root / "course/grading/__init__.py").write_text("# changed\n")
    (checkout.root / "source/02_training_loop").mkdir(parents=True)
    (checkout.root / "source/02_training_loop/other.txt").write_text("another assignment's file\n")
    assert plain_record.key(checkout, ASSIGNMENT) == before


def test_a_record_is_read_only_under_its_own_key(tmp_path, monkeypatch):
    handed_in = GradedAssignment(assignment=ASSIGNMENT, scores={}, test_ids={}, autograded=tmp_path / "autograded")
    graded_live = []

    def autograde(given):
        graded_live.append(given)
        return GradedAssignment(assignment=ASSIGNMENT, scores={"live": {"t": (1.0, 1.0)}}, test_ids={},
                                autograded=given.autograded)

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
