"""Grading one submission in a scratch course directory of its own.

A worker process (see `course.pool`) calls `grade_submission` for one student and one
assignment at a time. The scratch directory holds a copy of the submission, the
assignment's non-notebook files and a gradebook with only the assignment's definitions,
so that workers never share a SQLite file and nothing a kernel does can reach the
class's real files. nbgrader's own Autograde and GenerateFeedback run in this process
(importing nbgrader once per worker, not once per submission), with `GuardedExecute`
in place of nbgrader's Execute and the course's feedback (`course.feedback.configure`).

The result is plain data (scores as nbgrader recorded them, the problems found, timings),
sent back to the parent, which alone writes the real gradebook.
"""

from __future__ import annotations

import os
import shutil
import stat
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from . import gradebooks
from .report import TAMPERING, nbgrader_error, run_problems, submission_problems
from .sandbox import copy_regular

SKIPPED_FILE_KINDS = "symlinks and special files"
FEEDBACK_HELD_BACK = ("no feedback written while cells look like tampering; after a look, "
                      "`nbgrader generate_feedback` writes it")


@dataclass(frozen=True)
class Job:
    """One submission to grade, and where everything it needs is."""

    assignment: str
    student: str
    submission: str          # class_dir/submitted/<student>/<assignment>
    source: str              # the course's source/<assignment> (only its non-notebook files are used)
    template_db: str         # a gradebook holding only the assignment's definitions
    config_dirs: tuple[str, ...]  # where nbgrader_config.py files are read from, lowest priority first
    scratch: str             # an empty folder for this job
    sandbox_json: str
    feedback: bool = True


def load_config(config_dirs):
    """nbgrader's configuration as `nbgrader` itself would load it from these folders."""
    from traitlets.config import Config
    from traitlets.config.loader import JSONFileConfigLoader, PyFileConfigLoader

    config = Config()
    for folder in config_dirs:
        for loader, ext in ((PyFileConfigLoader, ".py"), (JSONFileConfigLoader, ".json")):
            path = Path(folder) / f"nbgrader_config{ext}"
            if path.is_file():
                config.merge(loader(path.name, path=str(folder)).load_config())
    return config


def grade_submission(job: Job) -> dict:
    """Autograde one submission and write its feedback; never raises."""
    started = time.perf_counter()
    scratch = Path(job.scratch)
    run = None
    result = {"assignment": job.assignment, "student": job.student, "scratch": job.scratch,
              "graded": False, "problems": [], "autograded": None, "feedback": None}
    try:
        skipped = _prepare(job, scratch)
        if skipped:
            result["problems"].append(("submission", f"{len(skipped)} {SKIPPED_FILE_KINDS} ignored: "
                                                      + ", ".join(skipped[:3])))
        submitted = scratch / "submitted" / job.student / job.assignment
        result["problems"] += submission_problems(submitted, job.template_db, job.assignment)
        api = _api(job, scratch)
        run = api.autograde(job.assignment, job.student, force=True, create=True)
        if not run["success"]:
            # nbgrader refuses a whole notebook over one bad cell (a duplicated grade id, edited
            # metadata): take the grading marks off such cells and let it grade the rest.
            repaired = _repair(submitted, job.template_db, job.assignment)
            if repaired:
                first = run
                run = api.autograde(job.assignment, job.student, force=True, create=True)
                if run["success"]:
                    result["problems"].append(("nbgrader", f"refused the notebook as handed in ("
                                               f"{nbgrader_error(first)}); graded after taking the grading "
                                               f"marks off {', '.join(repaired)}"))
        result["seconds_autograde"] = round(time.perf_counter() - started, 2)
        db_url = _db_url(scratch)
        autograded = scratch / "autograded" / job.student / job.assignment
        notebooks = sorted(autograded.glob("*.ipynb")) if autograded.is_dir() else []
        if run["success"] and notebooks:
            result["record"] = gradebooks.autograde_result(db_url, job.assignment, job.student)
            result["graded"] = True
        else:
            result["record"] = gradebooks.zero_result(db_url, job.assignment)
            if autograded.exists():
                shutil.rmtree(autograded)
        explained = any(what.endswith("scored zero") for _, what in result["problems"])
        result["problems"] += run_problems(run, autograded if result["graded"] else None, explained)
        if result["graded"]:
            _strip_links(autograded)
            result["autograded"] = str(autograded)
            if job.feedback and any(TAMPERING in what for _, what in result["problems"]):
                # Output of such cells may carry the hidden tests in a disguise that the
                # feedback's redaction cannot recognise: a TA releases it after a look.
                result["problems"].append(("feedback", FEEDBACK_HELD_BACK))
            elif job.feedback:
                fb_started = time.perf_counter()
                fb = api.generate_feedback(job.assignment, job.student, force=True)
                feedback = scratch / "feedback" / job.student / job.assignment
                if fb["success"] and feedback.is_dir():
                    result["feedback"] = str(feedback)
                else:
                    result["problems"].append(("feedback", "no feedback written: "
                                               + _last_line(fb.get("error") or fb.get("log") or "")))
                result["seconds_feedback"] = round(time.perf_counter() - fb_started, 2)
    except Exception as error:  # noqa: BLE001 - a broken submission must never stop the batch
        result["graded"] = False
        result["problems"].append(("grader", f"grading failed: {type(error).__name__}: {error}"))
        result["log"] = traceback.format_exc()
        try:
            result["record"] = gradebooks.zero_result(f"sqlite:///{job.template_db}", job.assignment)
        except Exception:  # noqa: BLE001
            result["record"] = None
    if run is not None and not run.get("success"):
        kernel_log = scratch / "kernel" / "kernel.log"     # what the kernel and bubblewrap said
        said = kernel_log.read_text(errors="replace")[-5000:] if kernel_log.is_file() else ""
        result["log"] = ((run.get("log") or "") + (run.get("error") or "") + result.get("log", "")
                         + (f"\n--- kernel.log ---\n{said}" if said else ""))[-50000:]
    result["seconds"] = round(time.perf_counter() - started, 2)
    return result


def _repair(submitted: Path, template_db: str, assignment: str) -> list[str]:
    """Remove the nbgrader metadata nbgrader chokes on; returns what was changed ('cell 12 (test_x)')."""
    import nbformat
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{template_db}") as gb:
        definitions = {nb.name: {c.name for c in nb.source_cells} for nb in gb.find_assignment(assignment).notebooks}
    changed = []
    for name, known in definitions.items():
        path = submitted / f"{name}.ipynb"
        try:
            nb = nbformat.read(str(path), as_version=4)
        except Exception:  # noqa: BLE001 - unreadable notebooks stay zero
            continue
        last = {}
        for i, cell in enumerate(nb.cells):
            meta = cell.get("metadata", {}).get("nbgrader")
            if isinstance(meta, dict) and meta.get("grade_id"):
                last[meta["grade_id"]] = i
        for i, cell in enumerate(nb.cells):
            meta = cell.get("metadata", {}).get("nbgrader")
            if meta is None:
                continue
            gid = meta.get("grade_id") if isinstance(meta, dict) else None
            if not isinstance(meta, dict) or gid not in known or last.get(gid) != i \
                    or meta.get("schema_version") != 3:
                del cell.metadata["nbgrader"]
                changed.append(f"cell {i + 1}" + (f" ({gid})" if gid else ""))
        if changed:
            nbformat.write(nb, str(path))
    return changed


def _db_url(scratch: Path) -> str:
    return f"sqlite:///{scratch / 'gradebook.db'}"


def _prepare(job: Job, scratch: Path) -> list[str]:
    """Lay out the scratch course; returns the submitted paths that were not copied."""
    if scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True)
    shutil.copy2(job.template_db, scratch / "gradebook.db")
    source = scratch / "source" / job.assignment
    source.mkdir(parents=True)
    src = Path(job.source)
    if src.is_dir():    # autograde copies these data files next to each notebook it grades
        shutil.copytree(src, source, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("*.ipynb", ".ipynb_checkpoints", "__pycache__"))
    return copy_regular(Path(job.submission), scratch / "submitted" / job.student / job.assignment)


def _strip_links(folder: Path) -> None:
    """Remove links and special files a kernel left behind: copying them would follow them."""
    for path in sorted(folder.rglob("*"), reverse=True):
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode) or not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            path.unlink()


def _api(job: Job, scratch: Path):
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, IgnorePattern, LimitOutput,
                                        SaveAutoGrades)

    from . import feedback
    from .execute import GuardedExecute
    from .sandbox import Sandbox

    config = load_config(job.config_dirs)
    config.CourseDirectory.root = str(scratch)
    config.CourseDirectory.db_url = _db_url(scratch)
    # nbgrader's own list with Execute swapped for GuardedExecute.
    config.Autograde.autograde_preprocessors = [GuardedExecute, IgnorePattern, ClearMetadataPreprocessor,
                                                LimitOutput, SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
    feedback.configure(config)
    sandbox = Sandbox.from_json(job.sandbox_json)
    config.GuardedExecute.sandbox_json = job.sandbox_json
    config.GuardedExecute.scratch_dir = str(scratch / "kernel")
    config.GuardedExecute.notebook_timeout = sandbox.limits.notebook_timeout
    config.GuardedExecute.output_per_cell = sandbox.limits.output_per_cell
    coursedir = CourseDirectory(config=config)
    return NbGraderAPI(coursedir=coursedir, config=config)


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no message"
