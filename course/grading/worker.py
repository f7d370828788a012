"""Grading one submission in a scratch course directory of its own.

A worker process (see `course.grading.pool`) calls `grade_submission` for one student and one
assignment at a time. The scratch directory holds a copy of the submission, the
assignment's non-notebook files and a gradebook with only the assignment's definitions,
so that workers never share a SQLite file and nothing a kernel does can reach the
class's real files. nbgrader's own Autograde and GenerateFeedback run in this process
(importing nbgrader once per worker, not once per submission), with `GuardedExecute`
in place of nbgrader's Execute and the course's feedback (`course.plugins.feedback.configure`).

The result is a `course.grading.contract.GradeResult`, plain data (scores as nbgrader recorded them,
the problems found, timings), sent back to the parent, which alone writes the real gradebook.
"""

from __future__ import annotations

import re
import shutil
import time
import traceback
from pathlib import Path

from course.grading import gradebooks, nbgrader_settings
from course.grading.active_content import given_markdown, make_inert_folder
from course.grading.contract import (
    EVENTS_FILE,
    SCRATCH_STUDENT,
    Event,
    EventKind,
    FailureKind,
    GradeResult,
    Job,
    Problem,
    ProblemKind,
    read_events,
)
from course.grading.diagnose import (
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


def grade_submission(job: Job) -> GradeResult:
    """Autograde one submission (see `_grade`); its texts made safe to write anywhere."""
    return _grade(job).printable()


def _grade(job: Job) -> GradeResult:
    """Autograde one submission and write its feedback; never raises.

    A failure that is not the student's (see `course.grading.execute.InfrastructureFailure`, and
    any error of the grading code itself) gives no record at all: `GradeResult.failure` says what
    happened, and the parent grades the submission again.
    """
    started = time.perf_counter()
    scratch = Path(job.scratch)
    run = None
    problems: list[Problem] = []
    timings: dict[str, float] = {}      # seconds_autograde, seconds_feedback, as far as it got
    try:
        left_out, invalid = prepare(job, scratch)
        if left_out:
            problems.append(files_left_out(left_out))
        problems += invalid
        submitted = ClassDir(scratch).submitted(SCRATCH_STUDENT, job.assignment)
        problems += submission_problems(submitted, job.template_db, job.assignment, Path(job.submission))
        put_back_locked_cells(submitted, Path(job.source), job.template_db, job.assignment)
        api = _api(job, scratch)
        run = _autograde(api, job, scratch)
        events = _events(scratch)
        if not run["success"] and not any(e.failure for e in events):
            # nbgrader refuses a whole notebook over one bad cell (a duplicated grade id, edited
            # metadata): take the grading marks off such cells and let it grade the rest.
            repaired = repair(submitted, job.template_db, job.assignment)
            if repaired:
                first = run
                run = _autograde(api, job, scratch)
                events = _events(scratch)
                if run["success"]:
                    problems.append(graded_after_repair(first, repaired))
        failure = next((e for e in events if e.failure), None)
        if failure is not None:
            log = _kernel_log(scratch) if failure.kind is FailureKind.KERNEL_START else ""
            said = f"; the kernel said: {_last_line(log)}" if log.strip() else ""
            return GradeResult.failed(job, failure.kind, f"{failure.notebook}.ipynb: {failure.detail}{said}",
                                      problems=problems, log=_failure_log(run, scratch), seconds=_since(started))
        problems += left_running_problems([e.to_json() for e in events if e.kind is EventKind.LEFT_RUNNING])
        timings["seconds_autograde"] = _since(started)
        db_url = gradebook_url(scratch)
        autograded = ClassDir(scratch).autograded(SCRATCH_STUDENT, job.assignment)
        notebooks = sorted(autograded.glob("*.ipynb")) if autograded.is_dir() else []
        graded = bool(run["success"] and notebooks)
        if graded:
            record = gradebooks.autograde_result(db_url, job.assignment, SCRATCH_STUDENT)
        else:
            record = gradebooks.zero_result(db_url, job.assignment)
            if autograded.exists():
                shutil.rmtree(autograded)
        explained = any(p.kind is ProblemKind.UNGRADABLE for p in problems)
        problems += run_problems(run, autograded if graded else None, explained,
                                 [e.to_json() for e in events if e.kind in (EventKind.OUTPUT_DROPPED,
                                                                            EventKind.PROCESSES_STOPPED)])
        feedback = None
        if graded:
            strip_links(autograded)
            # Before anything renders it: the notebook TAs open in formgrader, and the feedback made from it.
            make_inert_folder(autograded, given_markdown(Path(job.source)))
            if job.feedback and any(p.kind is ProblemKind.TAMPERING for p in problems):
                # Output of such cells may carry the hidden tests in a disguise that the
                # feedback's redaction cannot recognise: a TA releases it after a look.
                problems.append(feedback_held_back())
            elif job.feedback:
                fb_started = time.perf_counter()
                fb = api.generate_feedback(job.assignment, SCRATCH_STUDENT, force=True)
                folder = ClassDir(scratch).feedback(SCRATCH_STUDENT, job.assignment)
                if fb["success"] and folder.is_dir():
                    feedback = str(folder)
                else:
                    problems.append(feedback_not_written(_exception_line(fb.get("log") or "", fb.get("error") or "")))
                timings["seconds_feedback"] = _since(fb_started)
        log = "" if run.get("success") else _failure_log(run, scratch)
        return GradeResult.scored(job, graded=graded, record=record, problems=problems,
                                  autograded=str(autograded) if graded else None, feedback=feedback, log=log,
                                  seconds=_since(started), **timings)
    except Exception as error:  # noqa: BLE001 - the grader's own failure: never the student's zero
        log = traceback.format_exc()
        if run is not None and not run.get("success"):
            log = _failure_log(run, scratch) + log
        return GradeResult.failed(job, FailureKind.GRADER_ERROR, f"{type(error).__name__}: {error}",
                                  problems=problems, log=log, seconds=_since(started), **timings)


def _since(started: float) -> float:
    return round(time.perf_counter() - started, 2)


def _autograde(api, job: Job, scratch: Path) -> dict:
    """nbgrader's autograde, with the events of this run only (`contract.EVENTS_FILE`: see `_events`)."""
    events = scratch / "kernel" / EVENTS_FILE
    events.parent.mkdir(parents=True, exist_ok=True)
    events.unlink(missing_ok=True)
    return api.autograde(job.assignment, SCRATCH_STUDENT, force=True, create=True)


def _events(scratch: Path) -> list[Event]:
    """What the guarded executor wrote of the last autograde run, read once."""
    return read_events(scratch / "kernel" / EVENTS_FILE)


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

    config = nbgrader_settings.pointed_at(nbgrader_settings.load(job.config_dirs), scratch, gradebook_url(scratch))
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
