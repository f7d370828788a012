"""Before anything is graded: each assignment defined in the gradebook, and its setup cells run once in the
sandbox, so that a failure every submission would share stops the run at once (`GradingStopped`).

`Preflight` runs that kernel in a process of its own, beside the first submissions: its start and imports
(seconds) then cost no grading time, and `Preflight.wait` before the first result is recorded still stops
the run with nothing recorded."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
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


class Preflight:
    """`preflight` in a process of its own (`python -m course.grading.preflight`), started now."""

    def __init__(self, course: Course, assignments: list[str], templates: dict[str, Path], sandbox, scratch: Path,
                 threads: int = 1):
        spec = {"root": str(course.root), "assignments": assignments, "sandbox": sandbox.to_json(),
                "templates": {a: str(p) for a, p in templates.items()}, "scratch": str(scratch), "threads": threads}
        self._proc = subprocess.Popen([sys.executable, "-m", "course.grading.preflight"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True)
        self._stopped: str | None = None
        self._done = False
        try:
            self._proc.stdin.write(json.dumps(spec))
            self._proc.stdin.close()
        except BaseException:       # it died at once, or Ctrl-C: nothing of it may outlive this
            self.close()
            raise

    def wait(self) -> None:
        """Return once the setup cells ran in the sandbox; raise GradingStopped when they did not."""
        if not self._done:
            said = self._proc.stdout.read()
            self._proc.wait()
            self._done = True
            self._clear()
            lines = said.strip().splitlines()
            try:
                self._stopped = json.loads(lines[-1])["stopped"] if lines else "the preflight process said nothing"
            except (ValueError, KeyError, TypeError):
                self._stopped = f"the preflight process ended unreadably (exit {self._proc.returncode})"
            if self._stopped is None and self._proc.returncode != 0:
                self._stopped = f"the preflight process failed (exit {self._proc.returncode})"
        if self._stopped is not None:
            raise GradingStopped(self._stopped)

    def close(self) -> None:
        """End it if it still runs (an interrupted or failed run)."""
        if not self._done:
            self._proc.kill()
            self._proc.wait()
            self._done = True
            self._clear()
        self._proc.stdout.close()

    def _clear(self) -> None:
        from course.grading.pool import clear_worker

        clear_worker(self._proc.pid)     # what its kernel may have left: processes and groups of its uids


def _main() -> None:
    from course.grading.sandbox.host import private_mounts
    from course.grading.sandbox.policy import Sandbox

    private_mounts()    # as a grading worker does: the kernel's capped folders end with this process
    spec = json.loads(sys.stdin.read())
    stopped = None
    try:
        preflight(Course(Path(spec["root"])), spec["assignments"], {a: Path(p) for a, p in spec["templates"].items()},
                  Sandbox.from_json(spec["sandbox"]), Path(spec["scratch"]), spec["threads"])
    except GradingStopped as error:
        stopped = str(error)
    print(json.dumps({"stopped": stopped}), flush=True)


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


if __name__ == "__main__":
    _main()
