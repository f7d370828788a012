"""Running nbgrader itself, always in a scratch course directory.

The repository's own tree is never nbgrader's working directory: a gradebook,
submissions or autograded copies must not appear next to source/.
"""

import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import nbformat

from course.checkout import Course, fill_placeholders
from course.notebook.classdir import ClassDir


class NbgraderError(RuntimeError):
    pass


def scratch_course(course: Course, assignments: list[str], where: Path) -> Path:
    """A minimal course directory under `where`: the config and the given source folders."""
    where.mkdir(parents=True, exist_ok=True)
    shutil.copy2(course.config, where / "nbgrader_config.py")
    for assignment in assignments:
        dest = where / "source" / assignment
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(course.source_dir(assignment), dest,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        notebook = dest / f"{assignment}.ipynb"
        notebook.write_text(fill_placeholders(notebook.read_text(), course.root))
    return where


def run_nbgrader(course_dir: Path, *args: str, timeout: float | None = None, db_url: str | None = None) -> str:
    """Run `nbgrader ARGS` on `course_dir`; returns its log, raises NbgraderError on failure.

    The gradebook is `course_dir`'s own unless `db_url` names another one.
    """
    cmd = [sys.executable, "-m", "nbgrader", *args,
           f"--CourseDirectory.root={course_dir}",
           f"--CourseDirectory.db_url={db_url or ClassDir(course_dir).db_url}"]
    proc = subprocess.run(cmd, cwd=course_dir, capture_output=True, text=True, timeout=timeout)
    log = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise NbgraderError(f"nbgrader {' '.join(args)} failed (exit {proc.returncode}):\n{log}")
    return log


def generate_release(course_dir: Path, assignment: str) -> Path:
    """Generate the student version of `assignment` in `course_dir`; returns its release folder."""
    run_nbgrader(course_dir, "generate_assignment", assignment, "--force")
    return course_dir / "release" / assignment


def submit(course_dir: Path, assignment: str, student: str, notebook: nbformat.NotebookNode | bytes) -> Path:
    """Place `notebook` (a notebook, or raw bytes for corrupted ones) as `student`'s submission."""
    folder = ClassDir(course_dir).submitted(student, assignment)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{assignment}.ipynb"
    if isinstance(notebook, bytes):
        path.write_bytes(notebook)
    else:
        nbformat.write(notebook, str(path))
    return path


def cell_scores(course_dir: Path, assignment: str) -> dict[str, dict[str, tuple[float, float]]]:
    """{student: {grade_id: (score, max_score)}} for every autograded submission."""
    from nbgrader.api import Gradebook

    scores: dict[str, dict[str, tuple[float, float]]] = {}
    with Gradebook(ClassDir(course_dir).db_url) as gb:
        for submission in gb.assignment_submissions(assignment):
            per_cell = scores.setdefault(submission.student_id, {})
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    per_cell[grade.name] = (float(grade.score), float(grade.max_score))
    return scores


def quiet_nbgrader_warnings() -> None:
    """nbgrader's SQLAlchemy use and nbformat's repair of copied cell ids warn on every bad
    notebook; the report says what matters, and the TA's terminal stays readable."""
    warnings.filterwarnings("ignore", module=r"(sqlalchemy|nbgrader|nbformat)(\.|$)")
    warnings.filterwarnings("ignore", message=r"(Object of type|Non-unique cell id)")
