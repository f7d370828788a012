"""What the tests share: the course checkout they test, its fixtures bound to it (course.submissions), and
helpers for reading pages and for a stand-in of a student's kernel."""

import contextlib
import functools
import html
import re
from pathlib import Path

import plain_record

from course.checkout import Course
from course.submissions import answers
from course.submissions.answers import GradedAssignment, KeptAnswer  # noqa: F401 - for the tests' annotations
from course.notebook import cells
from course.notebook.cells import hidden_lines

ROOT = Path(__file__).resolve().parents[1]
COURSE = Course(ROOT)


def wrong_answers(assignment: str) -> list[KeptAnswer]:
    return answers.wrong_answers(COURSE, assignment)


def right_answers(assignment: str) -> list[KeptAnswer]:
    return answers.right_answers(COURSE, assignment)


def all_wrong_answers() -> list[KeptAnswer]:
    return answers.all_wrong_answers(COURSE)


def all_right_answers() -> list[KeptAnswer]:
    return answers.all_right_answers(COURSE)


@functools.cache
def grade(assignment: str) -> GradedAssignment:
    """Plain nbgrader's grades of this checkout's kept answers for `assignment` (once per assignment and run;
    read from its record where nothing it depends on changed: plain_record)."""
    return plain_record.grade(COURSE, assignment)


def shown_lines(page: str) -> set[str]:
    """The lines of text an HTML page shows (tags taken out, entities read), stripped."""
    return {line.strip() for line in html.unescape(re.sub(r"<[^>]+>", "", page)).splitlines()}


def secret_lines(assignment: str) -> set[str]:
    """Lines of the assignment's hidden tests that appear nowhere else in the instructor's notebook."""
    source = cells.read(COURSE.source_notebook(assignment))
    public, secret = set(), set()
    for cell in source.cells:
        secret.update(line.strip() for line in hidden_lines(cell.source))
        for line, is_secret in cells.classify_lines(cell.source):
            if not is_secret:
                public.add(line.strip())
    return secret - public


@contextlib.contextmanager
def notes_pipe(folder: Path):
    """The notes FIFO in `folder` as the worker makes it (course.grading.verdicts.notes), with a write end held
    open: yields (read end, path), which a judge takes as its `notes`."""
    import os

    from course.grading.verdicts.notes import make_fifo, open_reader

    path = make_fifo(folder)
    reader = open_reader(path)
    keep = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    try:
        yield reader, str(path)
    finally:
        os.close(keep)
        os.close(reader)


@contextlib.contextmanager
def listening(folder: Path):
    """A judge's Listener on the notes FIFO in `folder`, for a test run by a Judge in this process."""
    import os

    from course.grading.verdicts.notes import Listener

    with notes_pipe(folder) as (reader, path):
        listener = Listener(os.dup(reader), path)
        try:
            yield listener
        finally:
            listener.close()


def answer_kernel(folder: Path, notebook: str):
    """A stand-in for a student's kernel: a plain subprocess that runs `notebook` and serves its names with the
    course's answer server (course/grading/kernel/) on a socket in `folder`, as the sandboxed kernel does.
    Returns (listening socket: accept() one connection per test, the subprocess)."""
    import socket
    import subprocess
    import sys

    from course.grading.kernel.loading import load_code

    path = folder / "answers.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    listener.settimeout(60)
    # Loaded as the kernel loads it (its own module, `_course_answers`), then the notebook, then serving.
    code = (f"{load_code()}\nnamespace = {{}}\nexec({notebook!r}, namespace)\nimport sys\n"
            f"while True:\n    sys.modules['_course_answers']._course_serve({str(path)!r}, namespace)\n")
    return listener, subprocess.Popen([sys.executable, "-c", code])
