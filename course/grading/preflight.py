"""Before anything is graded: each assignment defined in the gradebook, and its setup cells run once in the
sandbox, so that a failure every submission would share stops the run at once (`GradingStopped`)."""

from __future__ import annotations

import signal
import threading
from pathlib import Path

from course.checkout import Course
from course.grading.contract import (
    GradingStopped,
)


def preflight(course: Course, assignments: list[str], templates: dict[str, Path], sandbox, scratch: Path,
              threads: int = 1) -> None:
    """Run every assignment's setup cells (the locked cells before the first student cell, as the
    gradebook holds them) in one kernel in the sandbox; raise GradingStopped with the reason when
    they fail: every submission would fail the same way (torch or `helpers` not importable there)."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    from course.grading.sandbox.kernel import kernel_manager_for
    from course.grading.scratch import instructor_cells, setup_cells

    nb = nbformat.v4.new_notebook()
    for assignment in assignments:
        names = instructor_cells(str(templates[assignment]), assignment)
        for source in setup_cells(str(templates[assignment]), assignment, course.source_dir(assignment), names):
            nb.cells.append(nbformat.v4.new_code_cell(source))
    if not nb.cells:
        return
    folder = scratch / "notebook"
    folder.mkdir(parents=True)
    manager = kernel_manager_for(sandbox.for_worker(0, threads), scratch / "kernel")
    client = NotebookClient(nb, kernel_name="python3", kernel_manager_class=manager, timeout=300,
                            startup_timeout=120, shutdown_kernel="immediate",
                            resources={"metadata": {"path": str(folder)}})
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        client.execute()
    except CellExecutionError as error:
        raise GradingStopped(f"the setup cells fail in the sandbox, so every submission would: "
                             f"{error.ename}: {error.evalue}. Nothing was graded.") from None
    except Exception as error:  # noqa: BLE001 - whatever stops a kernel here stops every kernel
        if isinstance(error.__context__, KeyboardInterrupt):    # Ctrl-C or SIGTERM while it started
            raise error.__context__ from None
        log = scratch / "kernel" / "kernel.log"
        said = [line for line in log.read_text(errors="replace").splitlines() if line.strip()] if log.is_file() else []
        raise GradingStopped(f"no kernel starts in the sandbox ({type(error).__name__}: {error}"
                             + (f"; it said: {said[-1]}" if said else "") + "). Nothing was graded.") from None
    finally:
        # nbclient's event loop takes SIGINT and SIGTERM while it runs and leaves them at their
        # defaults when it closes: SIGTERM would then kill this process without any cleanup.
        for sig, handler in handlers.items():
            if handler is not None and threading.current_thread() is threading.main_thread():
                signal.signal(sig, handler)


def register(course: Course, assignment: str, scratch: Path, db_url: str, config_dirs) -> None:
    """nbgrader's generate_assignment from source/ into the class gradebook (its release output is dropped)."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    from course.grading.worker import load_config
    from course.notebook.nbgrader import NbgraderError, scratch_course

    scratch_course(course, [assignment], scratch)     # source/ with the course's placeholders filled in
    config = load_config(config_dirs)
    config.CourseDirectory.root = str(scratch)
    config.CourseDirectory.db_url = db_url
    result = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config).generate_assignment(
        assignment, force=True, create=True)
    if not result["success"]:
        raise NbgraderError(f"nbgrader generate_assignment {assignment} failed:\n{result.get('log', '')}"
                            f"{result.get('error', '')}")


# -- committing one result (this process only) ------------------------------------------------------

def max_notebooks(templates: dict[str, Path]) -> int:
    from nbgrader.api import Gradebook

    most = 1
    for assignment, path in templates.items():
        with Gradebook(f"sqlite:///{path}") as gb:
            most = max(most, len(gb.find_assignment(assignment).notebooks))
    return most
