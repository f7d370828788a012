"""What only the TA's process writes, as each submission finishes: its autograded notebook and feedback in the
class folder, its grades in the real gradebook, the findings formgrader shows, and grades.csv."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from course.notebook.classdir import ClassDir

if TYPE_CHECKING:
    from course.grading.contract import GradeResult


def record(class_dir: Path, db_url: str, graded, problems) -> None:
    """The flags and comments a TA sees in formgrader for what was graded, and grades.csv from the gradebook."""
    from course.grading import gradebooks

    gradebooks.record_all_findings(class_dir, db_url, {key: problems.get(key, []) for key in graded})
    gradebooks.export_csv(db_url, ClassDir(class_dir).grades_csv)


def drop_csv_rows(path: Path, pairs: set[tuple[str, str]]) -> None:
    """Remove the rows of (student, assignment) `pairs` from nbgrader's grades CSV, which lists
    every student of the gradebook under every assignment, with a zero where nothing was recorded."""
    import csv

    if not pairs or not path.is_file():
        return
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return
    fields = list(rows[0])
    from course.grading.inert import spreadsheet

    shown = {(spreadsheet(student), spreadsheet(assignment)) for student, assignment in pairs}
    kept = [r for r in rows if (r.get("student_id"), r.get("assignment")) not in shown]
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(kept)


def commit(class_dir: Path, db_url: str, job, result: GradeResult, record: dict, config, feedback: bool) -> None:
    """Copy a finished submission's autograded notebooks and feedback into the class folder and merge `record`
    (nbgrader's, or the zero record of one that gave none) into the gradebook; `config`: the run's nbgrader
    configuration (course.grading.nbgrader_settings)."""
    from course.grading import gradebooks

    replace_tree(result.autograded, ClassDir(class_dir).autograded(job.student, job.assignment))
    replace_tree(result.feedback, ClassDir(class_dir).feedback(job.student, job.assignment))
    scored_by_hand = gradebooks.merge_autograde(db_url, job.assignment, job.student, record)
    if feedback and result.autograded and scored_by_hand:
        feedback_here(class_dir, db_url, job, config)


def replace_tree(src: str | None, dst: Path) -> None:
    """Put `src` at `dst` (or remove `dst` when `src` is None) without a moment with half a tree."""
    if src is None:
        if dst.exists():
            shutil.rmtree(dst)
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    incoming = dst.parent / f".{dst.name}.incoming"
    outgoing = dst.parent / f".{dst.name}.outgoing"
    for leftover in (incoming, outgoing):
        if leftover.exists():
            shutil.rmtree(leftover)
    _copy_tree(src, incoming)
    if dst.exists():
        os.replace(dst, outgoing)
    os.replace(incoming, dst)
    if outgoing.exists():
        shutil.rmtree(outgoing)
    for folder, dirs, files in os.walk(dst):     # the sandbox uid owned them; the TA should
        for name in [folder, *(os.path.join(folder, f) for f in files)]:
            try:
                os.lchown(name, os.getuid(), os.getgid())
            except PermissionError:
                pass


def _copy_tree(src: str, dst: Path) -> None:
    """Copy the folders and plain files of `src` (a worker's output: links and special files were stripped
    there) to `dst`. Not `shutil.copytree`, which gathers every error into one `shutil.Error` of strings:
    the first error here keeps its errno, so a full disk is told apart from any other failure."""
    for folder, dirs, files in os.walk(src):
        target = dst / os.path.relpath(folder, src)
        target.mkdir()
        for name in files:
            if os.path.isfile(os.path.join(folder, name)) and not os.path.islink(os.path.join(folder, name)):
                shutil.copy2(os.path.join(folder, name), target / name, follow_symlinks=False)


def disk_full(error: BaseException) -> bool:
    """Whether `error`, or an error it came from, is a full disk or quota: an errno, or SQLite's result code."""
    import sqlite3

    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if isinstance(error, sqlite3.Error) and getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
            return True
        error = getattr(error, "orig", None) or error.__cause__ or error.__context__
    return False


def feedback_here(class_dir: Path, db_url: str, job, config) -> None:
    """Feedback from the real gradebook, for a submission a grader has already scored by hand."""
    import glob

    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    from course.grading.nbgrader_settings import pointed_at
    from course.plugins import feedback

    config = pointed_at(config, class_dir, db_url)
    feedback.configure(config)
    # nbgrader reads the id as a glob pattern (an id may hold `[`, `*` or `?`), then takes the id back from
    # the path it found: escaped, it finds exactly this student's folder.
    NbGraderAPI(coursedir=CourseDirectory(config=config), config=config).generate_feedback(
        job.assignment, glob.escape(job.student), force=True)


# -- bookkeeping ---------------------------------------------------------------------------------------
