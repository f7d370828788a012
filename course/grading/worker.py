"""Grading one submission in a scratch course directory of its own.

A worker process (see `course.grading.pool`) calls `grade_submission` for one student and one
assignment at a time. The scratch directory holds a copy of the submission, the
assignment's non-notebook files and a gradebook with only the assignment's definitions,
so that workers never share a SQLite file and nothing a kernel does can reach the
class's real files. nbgrader's own Autograde and GenerateFeedback run in this process
(importing nbgrader once per worker, not once per submission), with `GuardedExecute`
in place of nbgrader's Execute and the course's feedback (`course.plugins.feedback.configure`).

The result is plain data (scores as nbgrader recorded them, the problems found, timings),
sent back to the parent, which alone writes the real gradebook.
"""

from __future__ import annotations

import json
import re
import shutil
import time
import traceback
from pathlib import Path

from course.grading import gradebooks
from course.grading.active_content import given_markdown, make_inert_folder
from course.grading.contract import (
    EVENTS_FILE,
    GRADER_ERROR,
    INFRASTRUCTURE_KINDS,
    KERNEL_START,
    LEFT_RUNNING,
    OUTPUT_DROPPED,
    PROCESSES_STOPPED,
    SCRATCH_STUDENT,
    Job,
    ProblemKind,
    printable_result,
)
from course.grading.present import (
    feedback_held_back,
    feedback_not_written,
    files_left_out,
    graded_after_repair,
    left_running_problems,
    run_problems,
    submission_problems,
)
from course.grading.sandbox.policy import Sandbox
from course.grading.scratch import (
    gradebook_url,
    prepare,
    put_back_locked_cells,
    repair,
    setup_cell_ids,
    strip_links,
)
from course.notebook.classdir import ClassDir


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
    """Autograde one submission (see `_grade`); its texts made safe to write anywhere."""
    return printable_result(_grade(job))


def _grade(job: Job) -> dict:
    """Autograde one submission and write its feedback; never raises.

    A failure that is not the student's (see `course.grading.execute.InfrastructureFailure`, and
    any error of the grading code itself) gives no record at all: `result["infrastructure"]`
    says what happened, and the parent grades the submission again.
    """
    started = time.perf_counter()
    scratch = Path(job.scratch)
    run = None
    result = {"assignment": job.assignment, "student": job.student, "scratch": job.scratch,
              "graded": False, "problems": [], "autograded": None, "feedback": None, "infrastructure": None}
    try:
        left_out, invalid = prepare(job, scratch)
        if left_out:
            result["problems"].append(files_left_out(left_out))
        result["problems"] += invalid
        submitted = ClassDir(scratch).submitted(SCRATCH_STUDENT, job.assignment)
        result["problems"] += submission_problems(submitted, job.template_db, job.assignment, Path(job.submission))
        put_back_locked_cells(submitted, Path(job.source), job.template_db, job.assignment)
        api = _api(job, scratch)
        run = _autograde(api, job, scratch)
        if not run["success"] and not _events(scratch, INFRASTRUCTURE_KINDS):
            # nbgrader refuses a whole notebook over one bad cell (a duplicated grade id, edited
            # metadata): take the grading marks off such cells and let it grade the rest.
            repaired = repair(submitted, job.template_db, job.assignment)
            if repaired:
                first = run
                run = _autograde(api, job, scratch)
                if run["success"]:
                    result["problems"].append(graded_after_repair(first, repaired))
        failures = _events(scratch, INFRASTRUCTURE_KINDS)
        if failures:
            log = _kernel_log(scratch) if failures[0]["kind"] == KERNEL_START else ""
            said = f"; the kernel said: {_last_line(log)}" if log.strip() else ""
            result["infrastructure"] = {"kind": failures[0]["kind"],
                                        "detail": f"{failures[0]['notebook']}.ipynb: {failures[0]['detail']}{said}"}
            result["record"] = None
            result["log"] = _failure_log(run, scratch)
            result["seconds"] = round(time.perf_counter() - started, 2)
            return result
        result["problems"] += left_running_problems(_events(scratch, (LEFT_RUNNING,)))
        result["seconds_autograde"] = round(time.perf_counter() - started, 2)
        db_url = gradebook_url(scratch)
        autograded = ClassDir(scratch).autograded(SCRATCH_STUDENT, job.assignment)
        notebooks = sorted(autograded.glob("*.ipynb")) if autograded.is_dir() else []
        if run["success"] and notebooks:
            result["record"] = gradebooks.autograde_result(db_url, job.assignment, SCRATCH_STUDENT)
            result["graded"] = True
        else:
            result["record"] = gradebooks.zero_result(db_url, job.assignment)
            if autograded.exists():
                shutil.rmtree(autograded)
        explained = any(p.kind is ProblemKind.UNGRADABLE for p in result["problems"])
        result["problems"] += run_problems(run, autograded if result["graded"] else None, explained,
                                           _events(scratch, (OUTPUT_DROPPED, PROCESSES_STOPPED)))
        if result["graded"]:
            strip_links(autograded)
            # Before anything renders it: the notebook TAs open in formgrader, and the feedback made from it.
            make_inert_folder(autograded, given_markdown(Path(job.source)))
            result["autograded"] = str(autograded)
            if job.feedback and any(p.kind is ProblemKind.TAMPERING for p in result["problems"]):
                # Output of such cells may carry the hidden tests in a disguise that the
                # feedback's redaction cannot recognise: a TA releases it after a look.
                result["problems"].append(feedback_held_back())
            elif job.feedback:
                fb_started = time.perf_counter()
                fb = api.generate_feedback(job.assignment, SCRATCH_STUDENT, force=True)
                feedback = ClassDir(scratch).feedback(SCRATCH_STUDENT, job.assignment)
                if fb["success"] and feedback.is_dir():
                    result["feedback"] = str(feedback)
                else:
                    result["problems"].append(feedback_not_written(_exception_line(fb.get("log") or "",
                                                                                   fb.get("error") or "")))
                result["seconds_feedback"] = round(time.perf_counter() - fb_started, 2)
    except Exception as error:  # noqa: BLE001 - the grader's own failure: never the student's zero
        result.update(graded=False, record=None, autograded=None, feedback=None,
                      infrastructure={"kind": GRADER_ERROR, "detail": f"{type(error).__name__}: {error}"})
        result["log"] = traceback.format_exc()
    if run is not None and not run.get("success"):
        result["log"] = _failure_log(run, scratch) + result.get("log", "")
    result["seconds"] = round(time.perf_counter() - started, 2)
    return result


def _autograde(api, job: Job, scratch: Path) -> dict:
    """nbgrader's autograde, with the events of this run only (course.grading.execute.EVENTS_FILE)."""
    events = scratch / "kernel" / EVENTS_FILE
    events.parent.mkdir(parents=True, exist_ok=True)
    events.unlink(missing_ok=True)
    return api.autograde(job.assignment, SCRATCH_STUDENT, force=True, create=True)


def _events(scratch: Path, kinds) -> list[dict]:
    path = scratch / "kernel" / EVENTS_FILE
    lines = path.read_text().splitlines() if path.is_file() else []
    return [e for e in map(json.loads, lines) if e.get("kind") in kinds]


def _kernel_log(scratch: Path) -> str:
    """The end of what the kernels and bubblewrap said."""
    kernel_log = scratch / "kernel" / "kernel.log"
    if not kernel_log.is_file():
        return ""
    with open(kernel_log, "rb") as f:       # the kernel writes it: read its end only, whatever its size
        f.seek(max(0, f.seek(0, 2) - 5000))
        return f.read().decode("utf-8", "replace")


def _failure_log(run: dict | None, scratch: Path) -> str:
    """nbgrader's account of a failed run and what the kernel and bubblewrap said, for the TA."""
    said = _kernel_log(scratch)
    run = run or {}
    return ((run.get("log") or "") + (run.get("error") or "") + (f"\n--- kernel.log ---\n{said}" if said else ""))[-50000:]


def _api(job: Job, scratch: Path):
    from nbgrader.apps import NbGraderAPI
    from nbgrader.converters import Autograde
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import Execute

    from course.grading.execute import GuardedExecute
    from course.plugins import feedback

    config = load_config(job.config_dirs)
    config.CourseDirectory.root = str(scratch)
    config.CourseDirectory.db_url = gradebook_url(scratch)
    # nbgrader's own list, whatever its version, with Execute swapped for GuardedExecute.
    default = Autograde.class_traits()["autograde_preprocessors"].make_dynamic_default()
    if Execute not in default:      # test cells would run in the student's kernel: never grade so
        raise RuntimeError(f"this nbgrader's autograde has no Execute step to replace: {default}")
    config.Autograde.autograde_preprocessors = [GuardedExecute if step is Execute else step for step in default]
    feedback.configure(config)
    sandbox = Sandbox.from_json(job.sandbox_json)
    config.GuardedExecute.sandbox_json = job.sandbox_json
    config.GuardedExecute.scratch_dir = str(scratch / "kernel")
    config.GuardedExecute.notebook_timeout = sandbox.limits.notebook_timeout
    config.GuardedExecute.output_per_cell = sandbox.limits.output_per_cell
    config.GuardedExecute.setup_cells = setup_cell_ids(job.template_db, job.assignment, Path(job.source))
    coursedir = CourseDirectory(config=config)
    return NbGraderAPI(coursedir=coursedir, config=config)


_EXCEPTION = re.compile(r"^((?:[A-Za-z_]\w*\.)*[A-Z]\w*): (.*)$", re.MULTILINE)


def _exception_line(*texts: str) -> str:
    """'Type: first line of its message' of the last exception a traceback in `texts` ends with
    (nbgrader hands back its log and tracebacks as text; its own final error says only 'see the log')."""
    for text in texts:
        found = [m for m in _EXCEPTION.finditer(text) if not m.group(1).startswith("NbGraderException")]
        if found:
            return f"{found[-1].group(1)}: {found[-1].group(2)[:300]}"
    return _last_line("\n".join(texts))


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no message"
