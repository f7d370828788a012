"""Before anything is graded: each assignment defined in the gradebook (`register`), and what the run's hard
time limit needs to know of it (`max_notebooks`).

Whether the setup cells run in the sandbox is not checked apart: every submission's kernel runs them first,
before any student code, and a failure there stops the run (`course.grading.batch`)."""

from __future__ import annotations

from pathlib import Path

from course.checkout import Course


def register(course: Course, assignment: str, scratch: Path, db_url: str, config) -> None:
    """nbgrader's generate_assignment from source/ into the class gradebook (its release output is dropped);
    `config`: the run's nbgrader configuration (course.grading.nbgrader_settings)."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    from course.grading.nbgrader_settings import pointed_at
    from course.notebook.nbgrader_runs import NbgraderError, scratch_course

    import time

    scratch_course(course, [assignment], scratch)     # source/ with the course's placeholders filled in
    config = pointed_at(config, scratch, db_url)
    for attempt in range(3):
        result = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config).generate_assignment(
            assignment, force=True, create=True)
        if result["success"]:
            return
        # Another run (a second section into a shared gradebook) may be registering the same assignment at the
        # same moment, and one of the two is refused: a later try finds its definitions and updates them.
        time.sleep(1 + attempt)
    raise NbgraderError(f"nbgrader generate_assignment {assignment} failed:\n{result.get('log', '')}"
                        f"{result.get('error', '')}")


def max_notebooks(templates: dict[str, Path]) -> int:
    from nbgrader.api import Gradebook

    most = 1
    for assignment, path in templates.items():
        with Gradebook(f"sqlite:///{path}") as gb:
            most = max(most, len(gb.find_assignment(assignment).notebooks))
    return most

