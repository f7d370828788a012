"""Moving assignment definitions and autograde results between nbgrader gradebooks.

The class's real gradebook is written by one process only, the parent of `course grade`.
Each worker grades in a gradebook of its own that holds nothing but the assignment's
definitions (`copy_definitions`); the parent then copies back exactly the fields that
nbgrader's autograde writes (`merge_autograde`).
"""

from __future__ import annotations

import hashlib
import json
import time
from contextlib import contextmanager

from nbgrader.api import Gradebook, InvalidEntry, MissingEntry

from course.grading.contract import Problem
from course.grading.inert import markdown_block
from course.notebook.classdir import ClassDir


@contextmanager
def quick_schema_stamp():
    """Within this block, a new gradebook learns nbgrader's schema version in this process.

    nbgrader stamps every new gradebook with what `alembic heads` prints, from a subprocess
    that takes seconds; `course grade` makes a new one per assignment for its workers.
    """
    import os

    import nbgrader
    import nbgrader.api as api
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", os.path.join(os.path.dirname(nbgrader.__file__), "alembic"))
    head = ScriptDirectory.from_config(config).get_heads()[0]
    original = api.get_alembic_version
    api.get_alembic_version = lambda: head
    try:
        yield
    finally:
        api.get_alembic_version = original


def made(db_url: str, attempts: int = 3) -> None:
    """The gradebook at `db_url` exists with its tables and course. Two runs that open a new shared gradebook
    (PostgreSQL) at once both make its tables and its course row: one of them is refused (a row or a table that is
    already there) and finds them made when it looks again."""
    from sqlalchemy.exc import IntegrityError, ProgrammingError

    for attempt in range(attempts):
        try:
            with Gradebook(db_url):
                return
        except (InvalidEntry, IntegrityError, ProgrammingError):
            if attempt == attempts - 1:
                raise
            time.sleep(0.2 * (attempt + 1))


def has_assignment(db_url: str, assignment: str) -> bool:
    with Gradebook(db_url) as gb:
        try:
            gb.find_assignment(assignment)
            return True
        except MissingEntry:
            return False


def copy_definitions(src_url: str, dst_url: str, assignment: str, course_id: str = "default_course") -> None:
    """Put `assignment` as defined in `src_url` (notebooks, cells, due date) into `dst_url`."""
    with Gradebook(src_url) as src, Gradebook(dst_url, course_id) as dst:
        a = src.find_assignment(assignment)
        dst.update_or_create_assignment(assignment, duedate=a.duedate, course_id=a.course_id)
        for nb in a.notebooks:
            dst.update_or_create_notebook(nb.name, assignment, kernelspec=nb.kernelspec)
            for cell in nb.grade_cells:
                dst.update_or_create_grade_cell(cell.name, nb.name, assignment,
                                                max_score=cell.max_score, cell_type=cell.cell_type)
            for cell in nb.solution_cells:
                dst.update_or_create_solution_cell(cell.name, nb.name, assignment)
            for cell in nb.task_cells:
                dst.update_or_create_task_cell(cell.name, nb.name, assignment,
                                               max_score=cell.max_score, cell_type=cell.cell_type)
            for cell in nb.source_cells:
                dst.update_or_create_source_cell(cell.name, nb.name, assignment, cell_type=cell.cell_type,
                                                 locked=cell.locked, source=cell.source, checksum=cell.checksum)


def definition_digest(db_url: str, assignment: str) -> str:
    """A fingerprint of how `assignment` is defined: it changes when its cells or points do."""
    with Gradebook(db_url) as gb:
        a = gb.find_assignment(assignment)
        parts = [str(a.duedate)]
        for nb in sorted(a.notebooks, key=lambda n: n.name):
            parts.append(nb.name)
            parts += sorted(f"grade {c.name} {c.max_score} {c.cell_type}" for c in nb.grade_cells)
            parts += sorted(f"source {c.name} {c.checksum}" for c in nb.source_cells)
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]


def autograde_result(db_url: str, assignment: str, student: str) -> dict:
    """What nbgrader's autograde recorded for one submission, as plain data."""
    with Gradebook(db_url) as gb:
        sub = gb.find_submission(assignment, student)
        result = {"timestamp": sub.timestamp.isoformat() if sub.timestamp else None, "notebooks": {}}
        for nb in sub.notebooks:
            result["notebooks"][nb.name] = {
                "late_submission_penalty": nb.late_submission_penalty,
                "grades": {g.name: [g.auto_score, g.needs_manual_grade] for g in nb.grades},
                "comments": {c.name: c.auto_comment for c in nb.comments},
            }
    return result


def zero_result(db_url: str, assignment: str) -> dict:
    """The record of a submission that could not be graded at all: every graded cell scores zero.

    It is what nbgrader's own autograde records for a notebook that is missing.
    """
    with Gradebook(db_url) as gb:
        a = gb.find_assignment(assignment)
        notebooks = {}
        for nb in a.notebooks:
            graded = [c.name for c in nb.grade_cells] + [c.name for c in nb.task_cells]
            notebooks[nb.name] = {"late_submission_penalty": None,
                                  "grades": {name: [0.0, False] for name in graded},
                                  "comments": {}}
    return {"timestamp": None, "notebooks": notebooks}


def check_result(db_url: str, assignment: str, result) -> None:
    """ValueError unless `result` is an `autograde_result` of `assignment` as defined in the gradebook at `db_url`:
    its notebooks, cells and comments the assignment's, each score a number from 0 to its cell's maximum (or none),
    a timestamp nbgrader could have written (what a cluster's worker sends back is checked so before it is merged)."""
    from datetime import datetime

    def number(value, most):
        return value is None or (type(value) in (int, float) and 0 <= value <= most)

    if type(result) is not dict or set(result) != {"timestamp", "notebooks"} or type(result["notebooks"]) is not dict:
        raise ValueError("not an autograde record")
    if result["timestamp"] is not None:
        datetime.fromisoformat(result["timestamp"])        # ValueError, or TypeError for a non-string
    with Gradebook(db_url) as gb:
        defined = {nb.name: nb for nb in gb.find_assignment(assignment).notebooks}
        for name, nb in result["notebooks"].items():
            if name not in defined or type(nb) is not dict or \
                    set(nb) != {"late_submission_penalty", "grades", "comments"}:
                raise ValueError(f"a notebook the assignment does not have, or not a notebook's record: {name!r:.60}")
            cells = {c.name: c.max_score for c in [*defined[name].grade_cells, *defined[name].task_cells]}
            commented = {c.name for c in [*defined[name].solution_cells, *defined[name].task_cells]}
            for cell, value in nb["grades"].items():
                if cell not in cells or type(value) is not list or len(value) != 2 or not number(value[0], cells[cell]):
                    raise ValueError(f"{name}: a grade outside the assignment's cells or their points: {cell!r:.60}")
            if not set(nb["comments"]) <= commented or not all(
                    c is None or type(c) is str for c in nb["comments"].values()):
                raise ValueError(f"{name}: a comment on a cell that takes none")
            if not number(nb["late_submission_penalty"], float("inf")):
                raise ValueError(f"{name}: a late penalty that is not a number")


def merge_autograde(db_url: str, assignment: str, student: str, result: dict) -> bool:
    """Record `result` (from `autograde_result` or `zero_result`) in the gradebook at `db_url`, in one session;
    whether a grader had already scored any of its cells by hand (its feedback then comes from this gradebook).

    Writes what nbgrader's SaveAutoGrades and AssignLatePenalties write and nothing else:
    manual scores and manual comments a grader already gave are kept, and, as in
    nbgrader, a grade that has a manual score is marked for review again.
    """
    from datetime import datetime

    with _with_student(db_url, student) as gb:
        timestamp = datetime.fromisoformat(result["timestamp"]) if result["timestamp"] else None
        if timestamp is not None:
            gb.update_or_create_submission(assignment, student, timestamp=timestamp)
        else:
            gb.update_or_create_submission(assignment, student)
        for nb_name, nb in result["notebooks"].items():
            submitted = gb.find_submission_notebook(nb_name, assignment, student)
            submitted.late_submission_penalty = nb["late_submission_penalty"]
            for name, (auto_score, _) in nb["grades"].items():
                grade = gb.find_grade(name, nb_name, assignment, student)
                grade.auto_score = auto_score
                grade.needs_manual_grade = grade.manual_score is not None or auto_score is None
            for name, auto_comment in nb["comments"].items():
                gb.find_comment(name, nb_name, assignment, student).auto_comment = auto_comment
        gb.db.commit()
        submission = gb.find_submission(assignment, student)
        return any(g.manual_score is not None for nb in submission.notebooks for g in nb.grades)


@contextmanager
def _with_student(db_url: str, student: str):
    """The gradebook at `db_url`, with `student` in it. In a gradebook that runs share (PostgreSQL), another run
    may add the same student between nbgrader's look and its insert: the insert's InvalidEntry then means the
    student is there now, and a fresh session finds it (the failed one keeps the refused object)."""
    with Gradebook(db_url) as gb:
        try:
            gb.update_or_create_student(student)
        except InvalidEntry:
            pass
        else:
            yield gb
            return
    with Gradebook(db_url) as gb:
        gb.find_student(student)        # MissingEntry: refused for another reason
        yield gb


def scores(db_url: str, assignments: list[str]) -> dict[tuple[str, str], tuple[float, float]]:
    """{(student, assignment): (score, max_score)} for every submission of `assignments`."""
    found = {}
    with Gradebook(db_url) as gb:
        for assignment in assignments:
            try:
                max_score = gb.find_assignment(assignment).max_score
            except MissingEntry:
                continue
            for sub in gb.assignment_submissions(assignment):
                found[(sub.student_id, assignment)] = (float(sub.score), float(max_score))
    return found


def cell_scores(db_url: str, assignment: str) -> dict[str, dict[str, float | None]]:
    """{student: {grade cell: score}}, for comparing two gradebooks cell by cell."""
    found: dict[str, dict[str, float | None]] = {}
    with Gradebook(db_url) as gb:
        for sub in gb.assignment_submissions(assignment):
            per_cell = found.setdefault(sub.student_id, {})
            for nb in sub.notebooks:
                for grade in nb.grades:
                    per_cell[f"{nb.name}/{grade.name}"] = None if grade.score is None else float(grade.score)
    return found


CSV_FIELDS = ("assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email", "raw_score",
              "late_submission_penalty", "score", "max_score")


def export_csv(db_url: str, path) -> None:
    """The grades CSV `nbgrader export` writes (its columns and values: every student under every assignment,
    zero where nothing was submitted), for every assignment in the gradebook, but written by the csv module,
    every text through `inert.spreadsheet`: nbgrader joins the fields with commas unquoted, so a student id
    (a folder name) holding a comma and a newline forged another student's row, and one starting with `=`
    was a formula in the TA's spreadsheet."""
    import csv

    from course.grading.inert import spreadsheet

    with Gradebook(db_url) as gb, open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(CSV_FIELDS)
        for assignment in gb.assignments:
            for student in gb.students:
                try:
                    sub = gb.find_submission(assignment.name, student.id)
                    penalty = sub.late_submission_penalty
                    got = (sub.timestamp, sub.score, penalty, max(0.0, sub.score - (penalty or 0.0)))
                except MissingEntry:
                    got = ("", 0.0, 0.0, 0.0)
                row = (assignment.name, assignment.duedate, got[0], student.id, student.last_name,
                       student.first_name, student.email, *got[1:], assignment.max_score)
                writer.writerow(["" if v is None else spreadsheet(v) if isinstance(v, str) else str(v) for v in row])


# -- what formgrader shows a TA -------------------------------------------------------------------

REPORT_COMMENT = "course grade's report (this notebook is flagged until a TA has looked):"


def import_roster(db_url: str, csv_path) -> None:
    """Register the students of `csv_path` (id, first_name, last_name, email, lms_user_id) with
    nbgrader's own `nbgrader db student import`, so that formgrader shows their names."""
    import logging

    from nbgrader.apps.dbapp import DbStudentImportApp
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config

    config = Config()
    config.CourseDirectory.db_url = db_url
    app = DbStudentImportApp(config=config, log_level=logging.WARNING)
    app.coursedir = CourseDirectory(parent=app)
    app.extra_args = [str(csv_path)]
    try:
        app.start()
    except SystemExit as refused:   # the app's own way to say that the file is not a roster
        raise ValueError(f"{csv_path}: not a roster nbgrader can import (see the log above)") from refused


def record_findings(class_dir, db_url: str, assignment: str, student: str, problems: list[Problem]) -> None:
    """`record_all_findings` for one submission."""
    record_all_findings(class_dir, db_url, {(student, assignment): problems})


def record_all_findings(class_dir, db_url: str, found: dict[tuple[str, str], list[Problem]]) -> None:
    """`_findings_in` for each (student, assignment) of `found`, the gradebook opened once."""
    with Gradebook(db_url) as gb:
        for (student, assignment), problems in found.items():
            _findings_in(gb, class_dir, assignment, student, problems)


def _findings_in(gb, class_dir, assignment: str, student: str, problems: list[Problem]) -> None:
    """Put what `course grade` found about one graded submission where a TA looks in formgrader.

    Each notebook the problems concern is flagged (nbgrader's flag, which formgrader lists and
    a TA takes off after a look) and the problems go, as an automatic comment, on its first
    cell that takes comments. A notebook nbgrader could not grade at all (not JSON, missing)
    gets a stand-in in autograded/ that says why, so that every formgrader view shows it as
    graded with zero instead of "needs autograding" in one and 0 in another.
    Submissions without problems are left as they are: a flag there is a TA's own.
    """
    from pathlib import Path

    import nbformat

    autograded = ClassDir(Path(class_dir)).autograded(student, assignment)
    submission = gb.find_submission(assignment, student)
    for nb in submission.notebooks:
        mine = [(p.where, p.what) for p in problems if p.where in (f"{nb.name}.ipynb", nb.name)
                or not p.where.endswith(".ipynb")]
        standin = autograded / f"{nb.name}.ipynb"
        if not standin.is_file():
            autograded.mkdir(parents=True, exist_ok=True)
            nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
                f"# {nb.name}.ipynb could not be graded\n\nEvery graded cell scores zero. "
                f"`course grade` reported:\n\n{_report(mine)}\n")]),
                str(standin))
        if not mine:
            continue
        nb.flagged = True
        order = _grade_ids(standin)
        comments = sorted(nb.comments, key=lambda c: (order.index(c.name) if c.name in order else len(order),
                                                      c.name))
        if comments:
            first = comments[0]
            report = f"{REPORT_COMMENT}\n{_report(mine)}"
            nbgrader_said = first.auto_comment or ""
            if nbgrader_said.startswith(REPORT_COMMENT):   # ours, from a run that changed nothing since
                nbgrader_said = ""
            first.auto_comment = report + (f"\n\n{nbgrader_said}" if nbgrader_said else "")
    gb.db.commit()


def _report(found: list[tuple[str, str]]) -> str:
    """The problems as Markdown that renders them as text (the stand-in is rendered, and so is the comment, in
    the feedback)."""
    return markdown_block([f"- {where}: {what}" for where, what in found] or ["- no report line"])


def _grade_ids(notebook) -> list[str | None]:
    """The grade ids of `notebook`'s cells, in order (none for a stand-in or a broken notebook)."""
    import nbformat

    try:
        return [c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
                for c in nbformat.read(str(notebook), as_version=4).cells]
    except Exception:  # noqa: BLE001 - anything that is not a notebook has no order to give
        return []
