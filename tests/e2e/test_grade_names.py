"""`course grade` takes any folder name a TA may receive, a student's edited cell metadata, and a failure while
recording one submission (a full disk included) without ending the run in a traceback or zeroing an honest
notebook. Real runs on the tiny course of test_grade_mechanics."""

import csv
import errno
import os
import shutil
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook
from e2e.test_grade_mechanics import MINI, QUIET, _scores, hand_in, mini_course

from course.grading import batch, commit
from course.grading.batch import grade
from course.grading.contract import RECORD_FAILED, GradeOptions, GradingStopped
from course.grading.inert import spreadsheet
from course.grading.diagnose import timestamp_left_out
from course.notebook.classdir import ClassDir
from course.grading.gradebooks import cell_scores

pytestmark = [pytest.mark.xdist_group("grade-mechanics"), pytest.mark.sandbox, pytest.mark.e2e, pytest.mark.slow]

CORRECT = "def double(x):\n    return 2 * x"

# Folder names a TA receives from an LMS export: glob characters nbgrader would read as a pattern, a legal
# 255-byte name, dots, spaces, other alphabets, a leading dash, markup and a terminal escape.
NAMES = ["ann[1]", "b*?", "." + "é" * 127, "x.y z", "Ω mañana 学生", "-rf", "O'Brien & Sons", "e\x1b[2J",
         "zed,,,,1.0,0.0,1.0,1.0\nmini,,,bob", "=HYPERLINK(pwned.invalid)"]
# Names that formgrader would run as markup (its templates write an id unescaped, in HTML and a JavaScript string).
MARKUP_NAMES = ["<img src=x onerror=alert(1)>", 'x";alert(1);"']


@pytest.fixture
def course_and_class(tmp_path):
    course = mini_course(tmp_path / "course")
    class_dir = tmp_path / "class"
    class_dir.mkdir()
    return course, class_dir


def test_any_folder_name_grades_or_is_named_not_graded(course_and_class):
    course, class_dir = course_and_class
    assert len(NAMES[2].encode()) == 255
    for name in NAMES:
        hand_in(class_dir, course, name, CORRECT)
    # Not UTF-8 (a Latin-1 name unzipped on Linux): the gradebook cannot hold it.
    latin1 = os.fsdecode(b"m\xfcller")
    shutil.copytree(ClassDir(class_dir).submitted("ann[1]"), ClassDir(class_dir).submitted(latin1))
    for name in MARKUP_NAMES:
        hand_in(class_dir, course, name, CORRECT)
    # A file inside a folder, named in another encoding (a Windows zip unpacked here): left out like any other.
    (ClassDir(class_dir).submitted("x.y z", MINI) / os.fsdecode(b"r\xe9sum\xe9.png")).write_bytes(b"png")
    run = grade(course, class_dir, [MINI], GradeOptions(jobs=2), **QUIET)
    assert _scores(class_dir) == {name: 1.0 for name in NAMES}, run.report
    assert set(run.ungraded) == {(latin1, MINI), *((name, MINI) for name in MARKUP_NAMES)}
    assert "not UTF-8" in run.ungraded[(latin1, MINI)]
    assert all("formgrader" in run.ungraded[(name, MINI)] for name in MARKUP_NAMES)
    for name in NAMES:
        assert (ClassDir(class_dir).autograded(name, MINI) / f"{MINI}.ipynb").is_file()
        assert ClassDir(class_dir).done_marker(name, MINI).is_file()
    assert all(len(p.name.encode()) < 100 for p in ClassDir(class_dir).state.rglob("*"))
    # grades.csv: one row per student, whatever the name holds, and no formula for a spreadsheet
    with open(ClassDir(class_dir).grades_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    assert sorted(r["student_id"] for r in rows) == sorted(spreadsheet(name) for name in NAMES)
    assert all(r["score"] == "1.0" and not r["student_id"].startswith(("=", "+", "-", "@")) for r in rows)
    again = grade(course, class_dir, [MINI], GradeOptions(jobs=2), **QUIET)
    assert {s for s, _ in again.skipped} == set(NAMES) and not again.graded


def test_a_test_cells_edited_metadata_is_graded_from_the_original(course_and_class):
    course, class_dir = course_and_class
    hand_in(class_dir, course, "ann", CORRECT)
    hand_in(class_dir, course, "bob", "def double(x):\n    return x + 2")
    hand_in(class_dir, course, "cat", CORRECT)     # the answer cell made a graded cell worth 10 points
    hand_in(class_dir, course, "dan", "def double(x):\n    return x + 2")
    edits = {"ann": ("test_double", {"solution": True, "points": 50}),
             "bob": ("test_double", {"solution": True, "points": 50}),
             "cat": ("double", {"grade": True, "points": 10}),
             "dan": ("double", {"grade": True, "points": 10, "locked": True})}
    for student, (gid, edit) in edits.items():
        path = ClassDir(class_dir).submitted(student, MINI) / f"{MINI}.ipynb"
        nb = nbformat.read(str(path), as_version=4)
        cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == gid)
        cell.metadata["nbgrader"].update(edit)
        nbformat.write(nb, str(path))
    run = grade(course, class_dir, [MINI], GradeOptions(jobs=1), **QUIET)
    assert _scores(class_dir) == {"ann": 1.0, "bob": 0.0, "cat": 1.0, "dan": 0.0}, run.report
    graded = cell_scores(f"sqlite:///{ClassDir(class_dir).gradebook}", MINI)
    assert all(set(cells) == {"mini/test_double"} for cells in graded.values()), graded     # no cell gains points
    for student, (gid, _) in edits.items():
        assert any("grading metadata edited" in p.what and gid in p.what for p in run.problems[(student, MINI)])


def test_a_submission_that_cannot_be_recorded_is_not_graded_and_the_run_goes_on(course_and_class, monkeypatch):
    course, class_dir = course_and_class
    for student in ("ann", "bob", "cid"):
        hand_in(class_dir, course, student, CORRECT)
    real = batch.commit

    def failing(class_dir, db_url, job, *args):
        if job.student == "bob":
            raise PermissionError(errno.EACCES, "Permission denied", "autograded/bob")
        return real(class_dir, db_url, job, *args)

    monkeypatch.setattr(batch, "commit", failing)
    run = grade(course, class_dir, [MINI], GradeOptions(jobs=1), **QUIET)
    assert _scores(class_dir) == {"ann": 1.0, "cid": 1.0}
    assert set(run.ungraded) == {("bob", MINI)} and RECORD_FAILED in run.ungraded[("bob", MINI)]
    assert "bob" in run.report and "Traceback" not in run.report
    monkeypatch.setattr(batch, "commit", real)
    again = grade(course, class_dir, [MINI], GradeOptions(jobs=1), **QUIET)
    assert {s for s, _ in again.graded} == {"bob"} and _scores(class_dir)["bob"] == 1.0


def test_a_full_disk_stops_the_run_with_what_was_recorded(course_and_class, monkeypatch):
    course, class_dir = course_and_class
    for student in ("ann", "bob", "cid"):
        hand_in(class_dir, course, student, CORRECT)
    real_copy = shutil.copy2
    autograded = ClassDir(class_dir.resolve()).autograded()
    recorded = []

    def copy2(src, dst, **kw):      # the disk fills while the second submission's notebook is copied in
        if Path(dst).is_relative_to(autograded):
            student = Path(dst).relative_to(autograded).parts[0]
            if student not in recorded:
                recorded.append(student)
            if len(recorded) > 1:
                raise OSError(errno.ENOSPC, "No space left on device", str(dst))
        return real_copy(src, dst, **kw)

    monkeypatch.setattr(commit.shutil, "copy2", copy2)
    with pytest.raises(GradingStopped) as stopped:
        grade(course, class_dir, [MINI], GradeOptions(jobs=1), **QUIET)
    message = str(stopped.value)
    assert "is full" in message and "1 submission(s) graded in this run are recorded" in message
    assert len(_scores(class_dir)) == 1
    monkeypatch.setattr(commit.shutil, "copy2", real_copy)
    again = grade(course, class_dir, [MINI], GradeOptions(jobs=1), **QUIET)
    assert len(again.graded) == 2 and _scores(class_dir) == {"ann": 1.0, "bob": 1.0, "cid": 1.0}


def test_disk_full_is_read_from_errno_and_sqlite_codes():
    import sqlite3

    import sqlalchemy.exc

    assert commit.disk_full(OSError(errno.ENOSPC, "x"))
    assert commit.disk_full(OSError(errno.EDQUOT, "x"))
    assert not commit.disk_full(OSError(errno.EACCES, "No space left on device"))     # words decide nothing
    full = sqlite3.OperationalError("database or disk is full")
    full.sqlite_errorcode = sqlite3.SQLITE_FULL
    assert commit.disk_full(sqlalchemy.exc.OperationalError("INSERT", {}, full))
    try:
        try:
            raise OSError(errno.ENOSPC, "x")
        except OSError:
            raise RuntimeError("wrapped")   # noqa: B904 - the context is what is read
    except RuntimeError as error:
        assert commit.disk_full(error)
    assert not commit.disk_full(ValueError("disk is full"))


def test_a_link_or_a_file_where_a_folder_should_be_is_named_not_graded(course_and_class):
    course, class_dir = course_and_class
    hand_in(class_dir, course, "ann", CORRECT)
    submitted = ClassDir(class_dir).submitted()
    (submitted / "linker").symlink_to(submitted / "ann")                # a student folder that is a link
    (submitted / "bob").mkdir()
    (submitted / "bob" / MINI).symlink_to(submitted / "ann" / MINI)     # an assignment folder that is one
    (submitted / "cid").mkdir()
    (submitted / "cid" / MINI).write_text("not a folder")
    run = grade(course, class_dir, [MINI], GradeOptions(jobs=1), **QUIET)
    assert _scores(class_dir) == {"ann": 1.0}
    assert set(run.ungraded) == {("linker", MINI), ("bob", MINI), ("cid", MINI)}
    assert "is a link" in run.ungraded[("bob", MINI)] and "not a folder" in run.ungraded[("cid", MINI)]


def test_a_timestamp_or_output_nbgrader_chokes_on_does_not_zero_a_notebook(course_and_class):
    """nbgrader ends a submission's autograde on a timestamp.txt it cannot parse or decode (it calls a `fail` its
    CourseDirectory lacks) and on an output its schema rejects (display data that is not text): the notebook
    beside them scored zero. The timestamp is left out, named in the report; the output made valid."""
    course, class_dir = course_and_class
    stamps = {"ts_escapes": b"\x1b]0;PWNED\x07\x1b[2J 2020-13-45\n", "ts_latin1": b"2026-12-01 10:00:00 M\xfcnchen\n",
              "ts_good": b"2026-12-01 10:00:00.000000 UTC\n"}
    for student, stamp in stamps.items():
        hand_in(class_dir, course, student, CORRECT)
        (ClassDir(class_dir).submitted(student, MINI) / "timestamp.txt").write_bytes(stamp)
    bad_display = ("from IPython.display import display\n"
                   "display({'text/plain': 5, 'image/png': 7, 'application/json': 'x'}, raw=True)\n"
                   "display({'text/plain': ['a', 2], 'text/html': None}, raw=True)\n")
    hand_in(class_dir, course, "bad_display", CORRECT, extra=bad_display)
    run = grade(course, class_dir, [MINI], GradeOptions(jobs=2), **QUIET)
    assert _scores(class_dir) == {student: 1.0 for student in [*stamps, "bad_display"]}, run.report
    for student in ("ts_escapes", "ts_latin1"):
        assert [p.what for p in run.problems[(student, MINI)]] == [timestamp_left_out().what]
    assert not run.problems.get(("ts_good", MINI)) and not run.problems.get(("bad_display", MINI)), run.report
    with Gradebook(ClassDir(class_dir).db_url) as gb:
        assert gb.find_submission(MINI, "ts_good").timestamp is not None
        assert gb.find_submission(MINI, "ts_escapes").timestamp is None
    autograded = nbformat.read(str(ClassDir(class_dir).autograded("bad_display", MINI) / f"{MINI}.ipynb"), 4)
    nbformat.validate(autograded)
