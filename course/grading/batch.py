"""`course grade`: autograde a whole class in parallel, sandboxed, with a report.

The class folder is an nbgrader course directory: submissions in
`submitted/<student>/<assignment>/`, the gradebook in `gradebook.db`, and what grading
writes, `autograded/` and `feedback/`, next to them. The steps:

1. set up the sandbox (or refuse: see `course.grading.sandbox.make_sandbox`);
2. make sure the gradebook defines each assignment (nbgrader's `generate_assignment`
   from source/ when it does not) and give the workers a copy of just those definitions;
3. grade every submission not graded yet, `jobs` at a time (`course.grading.pool`,
   `course.grading.worker`); as each one finishes, this process alone copies its autograded
   notebook and feedback into the class folder, records its grades in the real
   gradebook, and notes it as done in `.course-grade/`, so that a run killed half-way
   loses nothing that finished and the next run grades only the rest;
4. export the grades CSV, print the table, write the report.

A failure that is not the student's (the kernel or its sandbox does not start, the setup
cell fails before any student code ran, a grading process is lost: `GradeResult.failure`)
is never a score: the submission is graded again, up to `GradeOptions.retries` times (not
after running past the hard time limit, which it would do again), and after that stays ungraded (no gradebook row, no CSV row, no done-marker), named in the
report as one to grade again; the next run grades it. A failure that hits every
submission the same way is the grader's, and the run stops (`GradingStopped`): when an
assignment's setup cells fail in the sandbox before any submission of it was graded (they run
first, before any student code, so they would fail for every submission: torch or `helpers`
not importable there), and when the first submissions all fail the same way.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

from course.checkout import Course
from course.grading.commit import commit, disk_full, drop_csv_rows, record
from course.grading.contract import (
    RESULT_FORMAT,
    ExecutorFactory,
    FailureKind,
    GradeOptions,
    GradeResult,
    GradeRun,
    GradingStopped,
)
from course.grading.inert import terminal
from course.grading.preflight import max_notebooks, register
from course.grading.present import Progress, present
from course.grading.resume import done_problems, expected_seconds, fingerprint, write_done
from course.grading.sandbox.policy import make_sandbox
from course.notebook.classdir import ClassDir
from course.notebook.nbgrader_runs import quiet_nbgrader_warnings

# The run stops when the first this many submissions all failed the same grader's way.
SAME_FAILURE_STOPS = 3
NOTHING_RECORDED = ("nothing was recorded for them. Try one submission with `nbgrader autograde` to see the "
                    "whole error.")


def submissions(class_dir: Path, assignments: list[str]) -> list[tuple[str, str]]:
    """(student, assignment) for every folder submitted/<student>/<assignment>/, in order."""
    found = []
    root = ClassDir(class_dir).submitted()
    for student in sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        for assignment in assignments:
            if os.path.lexists(root / student / assignment):    # a link or a file too: named NOT GRADED
                found.append((student, assignment))
    return found


def grade(course: Course, class_dir: Path, assignments: list[str], options: GradeOptions, say=print,
          executor: ExecutorFactory | None = None) -> GradeRun:
    """Grade every submission of `assignments` in `class_dir` not graded yet; `executor` makes where the jobs run
    (default: `course.grading.pool.Pool`, processes on this machine)."""
    from course.grading.pool import Pool

    started = time.perf_counter()
    class_dir = class_dir.resolve()
    todo = submissions(class_dir, assignments)
    # The workers start first: importing nbgrader takes each process seconds, so they do it
    # while this process sets up the sandbox, imports the same and registers the assignments.
    threads = max(1, (os.cpu_count() or 1) // options.jobs)
    pool = (executor or Pool)(min(options.jobs, len(todo)), threads) if todo else None
    finished = False
    previous = _end_on_sigterm()
    try:
        sandbox, unsandboxed = make_sandbox([course.root, class_dir], options.limits, options.allow_unsandboxed)
        from course.grading.gradebooks import quick_schema_stamp

        with quick_schema_stamp(), warnings.catch_warnings():
            quiet_nbgrader_warnings()
            run = _grade(course, class_dir, assignments, options, say, todo, pool, sandbox, unsandboxed, started)
        finished = bool(run.graded)
        return run
    finally:
        if pool is not None and finished:
            pool.close()
        elif pool is not None:      # interrupted, failed or nothing to grade: do not wait for the workers
            pool.stop()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _end_on_sigterm():
    """Make SIGTERM (`kill`, a batch system's end of a job) end the run as Ctrl-C does: workers, their
    kernels and the scratch folders are cleaned up. Returns the handler it replaced (None off the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    return signal.signal(signal.SIGTERM, interrupt)


def _grade(course: Course, class_dir: Path, assignments: list[str], options: GradeOptions, say,
           todo, pool, sandbox, unsandboxed, started) -> GradeRun:
    from course.grading import gradebooks
    from course.grading.contract import Job
    from course.grading.worker import load_config

    config_dirs = nbgrader_config_dirs(course, class_dir)
    config = load_config(config_dirs)
    course_id = config.CourseDirectory.get("course_id", "default_course")
    db_url = ClassDir(class_dir).db_url
    state = ClassDir(class_dir).state
    tmp = Path(tempfile.mkdtemp(prefix="course-grade-"))
    os.chmod(tmp, 0o755)   # the sandbox uid must reach its own folders below this one
    try:
        definitions, templates = {}, {}
        for assignment in sorted({a for _, a in todo}):
            if not gradebooks.has_assignment(db_url, assignment):
                say(f"registering {assignment} in the gradebook (nbgrader generate_assignment) ...", flush=True)
                register(course, assignment, tmp / "register", db_url, config_dirs)
            templates[assignment] = tmp / "templates" / f"{assignment}.db"
            templates[assignment].parent.mkdir(exist_ok=True)
            gradebooks.copy_definitions(db_url, f"sqlite:///{templates[assignment]}", assignment, course_id)
            definitions[assignment] = gradebooks.definition_digest(db_url, assignment)

        jobs, skipped, stored_problems, ungraded = [], [], {}, {}
        for student, assignment in todo:
            unusable = unusable_id(student) or unusable_folder(ClassDir(class_dir).submitted(student, assignment))
            if unusable:
                ungraded[(student, assignment)] = unusable
                continue
            submitted = ClassDir(class_dir).submitted(student, assignment)
            try:
                digest = {"submission": fingerprint(submitted), "definition": definitions[assignment],
                          "format": RESULT_FORMAT}
            except OSError as error:    # a folder that changes or breaks while it is read: this one's, never the run's
                ungraded[(student, assignment)] = f"not graded: its folder could not be read ({type(error).__name__})"
                continue
            marker = ClassDir(class_dir).done_marker(student, assignment)
            stored = done_problems(marker, digest) if not options.force else None
            if stored is not None:
                skipped.append((student, assignment))
                stored_problems[(student, assignment)] = stored
                continue
            jobs.append((Job(assignment=assignment, student=student, submission=str(submitted),
                             source=str(course.source_dir(assignment)), template_db=str(templates[assignment]),
                             config_dirs=tuple(map(str, config_dirs)),
                             scratch=str(tmp / "jobs" / str(len(jobs))),    # short: ids may be long
                             sandbox_json=sandbox.to_json(), feedback=options.feedback), digest, marker))

        # Longest first, so that the last notebook to finish does not start last: the time a
        # submission of this assignment took before, or else the size of its source notebook.
        jobs.sort(key=lambda j: -expected_seconds(state, course, j[0].assignment))
        if unsandboxed:
            say(f"WARNING: grading WITHOUT a sandbox (--allow-unsandboxed): {unsandboxed}", file=sys.stderr)
        if skipped:
            say(f"{len(skipped)} submission(s) already graded and unchanged: skipped (--force regrades them)")
        problems = dict(stored_problems)
        graded, per_job = [], {}
        if jobs:
            progress = Progress(len(jobs), say)
            by_job = {id(job): (digest, marker) for job, digest, marker in jobs}
            hard_limit = options.limits.notebook_timeout * max_notebooks(templates) + 300
            attempts: dict[tuple[str, str], int] = {}
            first_failures: list[str | None] = []    # per submission, in finishing order: its first attempt's failure
            stopped: list[str] = []

            def on_result(job, result: GradeResult):
                from course.grading.pool import STOP

                key = (job.student, job.assignment)
                attempts[key] = attempts.get(key, 0) + 1
                failure = result.failure
                if attempts[key] == 1:
                    first_failures.append(failure and failure.kind)
                if failure:
                    shutil.rmtree(job.scratch, ignore_errors=True)
                    why = f"{failure.kind}: {failure.detail}"
                    if result.log:   # what nbgrader and the kernel said, for the TA, where there is room
                        with contextlib.suppress(OSError):
                            _write_log(by_job[id(job)][1], result.log)
                    if failure.kind is FailureKind.SETUP_FAILED and not any(a == job.assignment for _, a in graded):
                        # The instructor's setup cells ran first, before any student code: every submission of
                        # this assignment would fail there (a setup that passed once may fail once: retried).
                        stopped.append(f"the setup cells fail in the sandbox, so every submission would: "
                                       f"{failure.detail}; {NOTHING_RECORDED}")
                        return STOP
                    if stopped or (_same_failure(first_failures) and not graded):
                        stopped.append(f"the first {SAME_FAILURE_STOPS} submissions all failed the same way "
                                       f"before any student code could be blamed ({why}); {NOTHING_RECORDED}")
                        return STOP
                    # A job that ran past the hard limit would most likely run past it again: not retried.
                    if attempts[key] <= options.retries and failure.kind is not FailureKind.HARD_LIMIT:
                        progress.retry(job, why)
                        return True
                    ungraded[key] = f"{why} ({attempts[key]} attempts)"
                    progress.finished(job, False, len(result.problems), result.seconds)
                    return None
                ungraded.pop(key, None)
                try:
                    _commit(class_dir, db_url, job, result, by_job[id(job)], config_dirs, options.feedback)
                except Exception as error:  # noqa: BLE001 - recording one submission failed: never the run's end
                    why = f"{FailureKind.RECORD_FAILED}: {type(error).__name__}: {error}"
                    ungraded[key] = why
                    progress.finished(job, False, len(result.problems), result.seconds)
                    if disk_full(error):
                        stopped.append(_disk_full_message(
                            class_dir, error, graded, f"{len(jobs) - len(graded)} are not (among them the one "
                            f"being recorded, {job.assignment}/{job.student})"))
                        return STOP
                    return None
                finally:
                    shutil.rmtree(job.scratch, ignore_errors=True)
                problems[key] = list(result.problems)
                graded.append(key)
                per_job[key] = result.seconds or 0.0
                progress.finished(job, result.graded, len(result.problems), result.seconds)
                return None

            pool.run([job for job, _, _ in jobs], hard_limit, on_start=progress.started, on_result=on_result)
            progress.close()
            if stopped:
                _record(class_dir, db_url, graded, problems, ungraded)     # what finished before the stop stands
                raise GradingStopped(stopped[0])
            for job, _, _ in jobs:     # a run that stopped early: what never finished is not graded either
                key = (job.student, job.assignment)
                if key not in graded and key not in ungraded:
                    ungraded[key] = "not graded: the run stopped before it"

        _record(class_dir, db_url, graded, problems, ungraded)
        all_scores = gradebooks.scores(db_url, assignments)
        try:
            drop_csv_rows(ClassDir(class_dir).grades_csv, {k for k in ungraded if k not in all_scores})
        except OSError as error:
            _stop_if_disk_full(error, class_dir, graded)
            raise
        wanted = set(todo)
        run = GradeRun(class_dir=class_dir, assignments=assignments,
                       scores={k: v for k, v in all_scores.items() if k in wanted},
                       problems={k: v for k, v in problems.items() if v}, graded=graded, skipped=skipped,
                       seconds=time.perf_counter() - started, seconds_per_job=per_job, unsandboxed=unsandboxed,
                       ungraded=ungraded)
        present(run, sandbox)
        try:
            # A folder name that is not UTF-8 is in the report as its escapes, never an error.
            ClassDir(class_dir).report.write_text(run.report + "\n", encoding="utf-8", errors="backslashreplace")
        except OSError as error:
            _stop_if_disk_full(error, class_dir, graded)
            raise
        return run
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# What nbgrader's formgrader writes into its pages unescaped (its templates render a student id as it is, in
# HTML and in a JavaScript string): a folder name holding one would run as script in the TA's session.
MARKUP_CHARACTERS = '<>"'


def unusable_id(student: str) -> str | None:
    """Why a student's folder name cannot be a gradebook id, or None. Any name a TA may receive grades
    (the worker grades it under `SCRATCH_STUDENT` and no file name is made from it) but one that is not
    UTF-8, what `unzip` leaves of a name from another encoding (nbgrader's gradebook and formgrader take
    text), and one holding markup that formgrader would run (no LMS export makes such a name)."""
    try:
        student.encode("utf-8")
    except UnicodeEncodeError:
        return (f"not graded: its folder name is not UTF-8 ({os.fsencode(student)!r}); "
                "rename the folder (e.g. with `convmv`) and run again")
    if any(c in student for c in MARKUP_CHARACTERS):
        return (f"not graded: its folder name holds {' or '.join(c for c in MARKUP_CHARACTERS if c in student)}, "
                "which nbgrader's formgrader would put into its pages as markup; rename the folder and run again")
    return None


def unusable_folder(submitted: Path) -> str | None:
    """Why a submission's folder is not graded, or None: a link (to another student's folder, or anywhere on
    the TA's machine) or a file where a folder should be is no submission of its own."""
    for path in (submitted.parent, submitted):
        if path.is_symlink():
            return f"not graded: {path.name} is a link, not a folder handed in; replace it by the folder itself"
    if not submitted.is_dir():
        return f"not graded: {submitted.name} is not a folder"
    return None


def _commit(class_dir: Path, db_url: str, job, result: GradeResult, saved, config_dirs, feedback: bool) -> None:
    """Record one finished submission: its notebooks, feedback and grades (`commit`), then its done-marker and
    nbgrader's log, last, so that a submission whose recording failed half-way is graded again by the next run."""
    from course.grading import gradebooks

    digest, marker = saved
    record = result.record or gradebooks.zero_result(f"sqlite:///{job.template_db}", job.assignment)
    commit(class_dir, db_url, job, result, record, config_dirs, feedback)
    if result.log:   # nbgrader's own account of a failure, for the TA
        _write_log(marker, result.log)
    write_done(marker, digest, result)


def _write_log(marker: Path, log: str) -> None:
    """nbgrader's and the kernel's account, for a TA to `cat`: it quotes the submission, so each line is inert."""
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.with_suffix(".log").write_text("\n".join(terminal(line) for line in log.splitlines()) + "\n")


def _record(class_dir: Path, db_url: str, graded, problems, ungraded) -> None:
    """`commit.record` for what was graded; a failure there ends the run with what was recorded said."""
    try:
        record(class_dir, db_url, graded, problems)
    except Exception as error:  # noqa: BLE001 - the grades are in; only the flags and the CSV are missing
        _stop_if_disk_full(error, class_dir, graded)
        raise GradingStopped(f"{len(graded)} submission(s) were graded and their grades recorded, but the "
                             f"flags and grades.csv could not be written ({type(error).__name__}: {error}); "
                             "run `course grade` again to write them") from error


def _stop_if_disk_full(error: BaseException, class_dir: Path, graded) -> None:
    if disk_full(error):
        raise GradingStopped(_disk_full_message(class_dir, error, graded, "the rest are not")) from error


def _disk_full_message(class_dir: Path, error: BaseException, graded, not_recorded: str) -> str:
    return (f"the disk under {class_dir} is full ({type(error).__name__}: {error}); "
            f"{len(graded)} submission(s) graded in this run are recorded, {not_recorded}; free some space and "
            "run `course grade` again: it grades only what is not recorded")


def _same_failure(first_failures: list[str | None]) -> bool:
    """Did the first SAME_FAILURE_STOPS submissions all fail the same grader's way?"""
    first = first_failures[:SAME_FAILURE_STOPS]
    return len(first) == SAME_FAILURE_STOPS and first[0] is not None and len(set(first)) == 1


def nbgrader_config_dirs(course: Course, class_dir: Path) -> list[Path]:
    from jupyter_core.paths import jupyter_config_path

    dirs = [Path(p) for p in reversed(jupyter_config_path())]
    class_config = class_dir / "nbgrader_config.py"
    dirs.append(class_dir if class_config.is_file() else course.root)
    return dirs
