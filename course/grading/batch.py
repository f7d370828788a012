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
from course.grading import nbgrader_settings
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
from course.grading.run_lock import one_run_at_a_time
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
    started = time.perf_counter()
    class_dir = class_dir.resolve()
    with one_run_at_a_time(class_dir):
        return _grade_alone(course, class_dir, assignments, options, say, executor, started)


def _grade_alone(course, class_dir, assignments, options, say, executor, started) -> GradeRun:
    from course.grading.pool import Pool

    todo = submissions(class_dir, assignments)
    # The workers start first: importing nbgrader takes each process seconds, so they do it
    # while this process sets up the sandbox, imports the same and registers the assignments.
    threads = max(1, (os.cpu_count() or 1) // options.jobs)
    pool = (executor or Pool)(min(options.jobs, len(todo)), threads) if todo else None
    finished = False
    previous = _end_on_sigterm()
    try:
        # Where the kernels run elsewhere (a cluster's workers, each making its own), this machine needs none.
        sandbox, unsandboxed = (pool.sandbox(options.limits, options.allow_unsandboxed) if hasattr(pool, "sandbox")
                                else make_sandbox([course.root, class_dir], options.limits, options.allow_unsandboxed))
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


class _Run:
    """One run, once its workers and sandbox are up: the assignments defined (`register`), the jobs planned
    (`plan`), each result recorded as it comes (`on_result`), then the run's bookkeeping and report (`finish`).
    What it has recorded so far is in `graded`, `problems`, `ungraded` and `skipped`."""

    def __init__(self, course: Course, class_dir: Path, assignments: list[str], options: GradeOptions, say,
                 sandbox, unsandboxed, started: float, tmp: Path):
        self.course, self.class_dir, self.assignments, self.options, self.say = course, class_dir, assignments, \
            options, say
        self.sandbox, self.unsandboxed, self.started, self.tmp = sandbox, unsandboxed, started, tmp
        self.config_dirs = nbgrader_settings.folders(course, class_dir)
        self.config = nbgrader_settings.load(self.config_dirs)      # once per run: every step below reads it
        self.db_url = nbgrader_settings.gradebook_url(class_dir, options.db_url, self.config)
        self.templates: dict[str, Path] = {}
        self.graded: list[tuple[str, str]] = []
        self.skipped: list[tuple[str, str]] = []
        self.problems: dict = {}
        self.ungraded: dict[tuple[str, str], str] = {}
        self.per_job: dict[tuple[str, str], float] = {}
        self.stopped: list[str] = []
        self.executor_notes: list[str] = []

    def register(self, todo) -> dict[str, str]:
        """Each assignment of `todo` defined in the gradebook and copied for the workers; its definition's digest."""
        from course.grading import gradebooks

        course_id = self.config.CourseDirectory.get("course_id", "default_course")
        gradebooks.made(self.db_url)
        definitions = {}
        for assignment in sorted({a for _, a in todo}):
            if not gradebooks.has_assignment(self.db_url, assignment):
                self.say(f"registering {assignment} in the gradebook (nbgrader generate_assignment) ...", flush=True)
                register(self.course, assignment, self.tmp / "register", self.db_url, self.config)
            self.templates[assignment] = self.tmp / "templates" / f"{assignment}.db"
            self.templates[assignment].parent.mkdir(exist_ok=True)
            gradebooks.copy_definitions(self.db_url, f"sqlite:///{self.templates[assignment]}", assignment, course_id)
            definitions[assignment] = gradebooks.definition_digest(self.db_url, assignment)
        return definitions

    def plan(self, todo, definitions: dict[str, str]) -> list:
        """(job, digest, done-marker) for each submission of `todo` to grade, longest first; the unusable ones are
        ungraded with the reason, the unchanged ones skipped with their stored problems."""
        from course.grading.contract import Job

        jobs = []
        for student, assignment in todo:
            submitted = ClassDir(self.class_dir).submitted(student, assignment)
            unusable = unusable_id(student) or unusable_folder(submitted)
            if unusable:
                self.ungraded[(student, assignment)] = unusable
                continue
            try:
                digest = {"submission": fingerprint(submitted), "definition": definitions[assignment],
                          "format": RESULT_FORMAT}
            except (OSError, RecursionError) as error:  # a folder that breaks while read, or too deep: never the run's
                self.ungraded[(student, assignment)] = \
                    f"not graded: its folder could not be read ({type(error).__name__})"
                continue
            marker = ClassDir(self.class_dir).done_marker(student, assignment)
            stored = done_problems(marker, digest) if not self.options.force else None
            if stored is not None:
                self.skipped.append((student, assignment))
                self.problems[(student, assignment)] = stored
                continue
            jobs.append((Job(assignment=assignment, student=student, submission=str(submitted),
                             source=str(self.course.source_dir(assignment)),
                             template_db=str(self.templates[assignment]),
                             config_dirs=tuple(map(str, self.config_dirs)),
                             scratch=str(self.tmp / "jobs" / str(len(jobs))),    # short: ids may be long
                             sandbox_json=self.sandbox.to_json(), feedback=self.options.feedback), digest, marker))
        # Longest first, so that the last notebook to finish does not start last: the time a
        # submission of this assignment took before, or else the size of its source notebook.
        state = ClassDir(self.class_dir).state
        jobs.sort(key=lambda j: -expected_seconds(state, self.course, j[0].assignment))
        return jobs

    def grade(self, pool, jobs) -> None:
        """Run `jobs` on `pool`, recording each result as it comes; GradingStopped when the run must stop."""
        self.progress = Progress(len(jobs), self.say)
        self.saved = {id(job): (digest, marker) for job, digest, marker in jobs}
        self.attempts: dict[tuple[str, str], int] = {}
        self.first_failures: list[str | None] = []   # per submission, in finishing order: its first attempt's failure
        self.jobs = len(jobs)
        hard_limit = self.options.limits.notebook_timeout * max_notebooks(self.templates) + 300
        try:
            pool.run([job for job, _, _ in jobs], hard_limit, on_start=self.progress.started,
                     on_result=self.on_result)
        finally:
            self.executor_notes = list(getattr(pool, "notes", ()))     # a cluster's: the workers it retired
        self.progress.close()
        if self.stopped:
            _record(self.class_dir, self.db_url, self.graded, self.problems, self.ungraded)   # what finished stands
            raise GradingStopped(self.stopped[0])
        for job, _, _ in jobs:     # a run that stopped early: what never finished is not graded either
            key = (job.student, job.assignment)
            if key not in self.graded and key not in self.ungraded:
                self.ungraded[key] = "not graded: the run stopped before it"

    def on_result(self, job, result: GradeResult):
        """The executor's callback: True to retry `job`, STOP to end the run, None when it is settled."""
        key = (job.student, job.assignment)
        self.attempts[key] = self.attempts.get(key, 0) + 1
        if self.attempts[key] == 1:
            self.first_failures.append(result.failure and result.failure.kind)
        if result.failure:
            return self._failed(job, result)
        self.ungraded.pop(key, None)
        try:
            _commit(self.class_dir, self.db_url, job, result, self.saved[id(job)], self.config, self.options.feedback)
        except Exception as error:  # noqa: BLE001 - recording one submission failed: never the run's end
            from course.grading.pool import STOP

            self.ungraded[key] = f"{FailureKind.RECORD_FAILED}: {type(error).__name__}: {error}"
            self.progress.finished(job, False, len(result.problems), result.seconds)
            if disk_full(error):
                self.stopped.append(_disk_full_message(
                    self.class_dir, error, self.graded, f"{self.jobs - len(self.graded)} are not (among them the "
                    f"one being recorded, {job.assignment}/{job.student})"))
                return STOP
            return None
        finally:
            shutil.rmtree(job.scratch, ignore_errors=True)
        self.problems[key] = list(result.problems)
        self.graded.append(key)
        self.per_job[key] = result.seconds or 0.0
        self.progress.finished(job, result.graded, len(result.problems), result.seconds)
        return None

    def _failed(self, job, result: GradeResult):
        """A job that came back with the grader's failure, not a grade: retried, ungraded, or the run's end."""
        from course.grading.pool import STOP

        key, failure = (job.student, job.assignment), result.failure
        shutil.rmtree(job.scratch, ignore_errors=True)
        why = f"{failure.kind}: {failure.detail}"
        if result.log:   # what nbgrader and the kernel said, for the TA, where there is room
            with contextlib.suppress(OSError):
                _write_log(self.saved[id(job)][1], result.log)
        if failure.kind is FailureKind.SETUP_FAILED and not any(a == job.assignment for _, a in self.graded):
            # The instructor's setup cells ran first, before any student code: every submission of
            # this assignment would fail there (a setup that passed once may fail once: retried).
            self.stopped.append(f"the setup cells fail in the sandbox, so every submission would: "
                                f"{failure.detail}; {NOTHING_RECORDED}")
            return STOP
        if self.stopped or (_same_failure(self.first_failures) and not self.graded):
            self.stopped.append(f"the first {SAME_FAILURE_STOPS} submissions all failed the same way "
                                f"before any student code could be blamed ({why}); {NOTHING_RECORDED}")
            return STOP
        # A job that ran past the hard limit would most likely run past it again: not retried.
        if self.attempts[key] <= self.options.retries and failure.kind is not FailureKind.HARD_LIMIT:
            self.progress.retry(job, why)
            return True
        self.ungraded[key] = f"{why} ({self.attempts[key]} attempts)"
        self.progress.finished(job, False, len(result.problems), result.seconds)
        return None

    def finish(self, todo) -> GradeRun:
        """Flags, comments and grades.csv for what was graded, the table and the report."""
        from course.grading import gradebooks

        _record(self.class_dir, self.db_url, self.graded, self.problems, self.ungraded)
        all_scores = gradebooks.scores(self.db_url, self.assignments)
        try:
            drop_csv_rows(ClassDir(self.class_dir).grades_csv, {k for k in self.ungraded if k not in all_scores})
        except OSError as error:
            _stop_if_disk_full(error, self.class_dir, self.graded)
            raise
        wanted = set(todo)
        run = GradeRun(class_dir=self.class_dir, assignments=self.assignments,
                       scores={k: v for k, v in all_scores.items() if k in wanted},
                       problems={k: v for k, v in self.problems.items() if v}, graded=self.graded,
                       skipped=self.skipped, seconds=time.perf_counter() - self.started,
                       seconds_per_job=self.per_job, unsandboxed=self.unsandboxed, ungraded=self.ungraded,
                       db_url=self.db_url, executor_notes=self.executor_notes)
        present(run, self.sandbox)
        try:
            # A folder name that is not UTF-8 is in the report as its escapes, never an error.
            ClassDir(self.class_dir).report.write_text(run.report + "\n", encoding="utf-8",
                                                        errors="backslashreplace")
        except OSError as error:
            _stop_if_disk_full(error, self.class_dir, self.graded)
            raise
        return run


def _grade(course: Course, class_dir: Path, assignments: list[str], options: GradeOptions, say,
           todo, pool, sandbox, unsandboxed, started) -> GradeRun:
    tmp = Path(tempfile.mkdtemp(prefix="course-grade-"))
    os.chmod(tmp, 0o755)   # the sandbox uid must reach its own folders below this one
    try:
        run = _Run(course, class_dir, assignments, options, say, sandbox, unsandboxed, started, tmp)
        jobs = run.plan(todo, run.register(todo))
        if unsandboxed:
            say(f"WARNING: grading WITHOUT a sandbox (--allow-unsandboxed): {unsandboxed}", file=sys.stderr)
        if run.skipped:
            say(f"{len(run.skipped)} submission(s) already graded and unchanged: skipped (--force regrades them)")
        if jobs:
            run.grade(pool, jobs)
        return run.finish(todo)
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


def _commit(class_dir: Path, db_url: str, job, result: GradeResult, saved, config, feedback: bool) -> None:
    """Record one finished submission: its notebooks, feedback and grades (`commit`), then its done-marker and
    nbgrader's log, last, so that a submission whose recording failed half-way is graded again by the next run."""
    from course.grading import gradebooks

    digest, marker = saved
    record = result.record or gradebooks.zero_result(f"sqlite:///{job.template_db}", job.assignment)
    commit(class_dir, db_url, job, result, record, config, feedback)
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
