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
cell fails before any student code ran, a grading process is lost: `result["infrastructure"]`)
is never a score: the submission is graded again, up to `GradeOptions.retries` times (not
after running past the hard time limit, which it would do again), and after that stays ungraded (no gradebook row, no CSV row, no done-marker), named in the
report as one to grade again; the next run grades it. A failure that hits every
submission the same way is the grader's: a preflight kernel runs each assignment's setup
cells in the sandbox before anything is graded, and the run stops (`GradingStopped`)
when they fail or when the first submissions all fail the same way.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from course.checkout import Course
from course.grading.sandbox.policy import Limits, make_sandbox

STATE_DIR = ".course-grade"
REPORT_NAME = "grading_report.txt"
CSV_NAME = "grades.csv"


@dataclass
class GradeOptions:
    jobs: int
    force: bool = False
    allow_unsandboxed: bool = False
    limits: Limits = field(default_factory=Limits)
    feedback: bool = True
    retries: int = 2        # more attempts for a submission whose grading failed for the grader's reasons


# The run stops when the first this many submissions all failed the same grader's way.
SAME_FAILURE_STOPS = 3


class GradingStopped(RuntimeError):
    """Grading cannot work here (every kernel fails the same way); the message says why. Nothing was recorded."""


@dataclass
class GradeRun:
    class_dir: Path
    assignments: list[str]
    scores: dict[tuple[str, str], tuple[float, float]]
    problems: dict[tuple[str, str], list[tuple[str, str]]]
    graded: list[tuple[str, str]]
    skipped: list[tuple[str, str]]
    seconds: float
    seconds_per_job: dict[tuple[str, str], float]
    unsandboxed: str | None
    ungraded: dict[tuple[str, str], str] = field(default_factory=dict)   # not graded, and why: grade again
    table: str = ""
    report: str = ""

    @property
    def students(self) -> list[str]:
        return sorted({s for s, _ in self.scores})


def submissions(class_dir: Path, assignments: list[str]) -> list[tuple[str, str]]:
    """(student, assignment) for every folder submitted/<student>/<assignment>/, in order."""
    found = []
    root = class_dir / "submitted"
    for student in sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        for assignment in assignments:
            if (root / student / assignment).is_dir():
                found.append((student, assignment))
    return found


def grade(course: Course, class_dir: Path, assignments: list[str], options: GradeOptions, say=print) -> GradeRun:
    from course.grading.pool import Pool

    started = time.perf_counter()
    class_dir = class_dir.resolve()
    todo = submissions(class_dir, assignments)
    # The workers start first: importing nbgrader takes each process seconds, so they do it
    # while this process sets up the sandbox, imports the same and registers the assignments.
    threads = max(1, (os.cpu_count() or 1) // options.jobs)
    pool = Pool(min(options.jobs, len(todo)), threads) if todo else None
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


def quiet_nbgrader_warnings() -> None:
    """nbgrader's SQLAlchemy use and nbformat's repair of copied cell ids warn on every bad
    notebook; the report says what matters, and the TA's terminal stays readable."""
    warnings.filterwarnings("ignore", module=r"(sqlalchemy|nbgrader|nbformat)(\.|$)")
    warnings.filterwarnings("ignore", message=r"(Object of type|Non-unique cell id)")


def _grade(course: Course, class_dir: Path, assignments: list[str], options: GradeOptions, say,
           todo, pool, sandbox, unsandboxed, started) -> GradeRun:
    from course.grading import gradebooks
    from course.grading.worker import Job, load_config

    config_dirs = _config_dirs(course, class_dir)
    config = load_config(config_dirs)
    course_id = config.CourseDirectory.get("course_id", "default_course")
    db_url = f"sqlite:///{class_dir / 'gradebook.db'}"
    state = class_dir / STATE_DIR
    tmp = Path(tempfile.mkdtemp(prefix="course-grade-"))
    os.chmod(tmp, 0o755)   # the sandbox uid must reach its own folders below this one
    try:
        definitions, templates = {}, {}
        for assignment in sorted({a for _, a in todo}):
            if not gradebooks.has_assignment(db_url, assignment):
                say(f"registering {assignment} in the gradebook (nbgrader generate_assignment) ...", flush=True)
                _register(course, assignment, tmp / "register", db_url, config_dirs)
            templates[assignment] = tmp / "templates" / f"{assignment}.db"
            templates[assignment].parent.mkdir(exist_ok=True)
            gradebooks.copy_definitions(db_url, f"sqlite:///{templates[assignment]}", assignment, course_id)
            definitions[assignment] = gradebooks.definition_digest(db_url, assignment)

        jobs, skipped, stored_problems = [], [], {}
        for student, assignment in todo:
            submitted = class_dir / "submitted" / student / assignment
            digest = {"submission": _digest(submitted), "definition": definitions[assignment]}
            marker = state / assignment / f"{student}.json"
            if not options.force and _done(marker, digest):
                skipped.append((student, assignment))
                stored_problems[(student, assignment)] = [tuple(p) for p in json.loads(marker.read_text())["problems"]]
                continue
            jobs.append((Job(assignment=assignment, student=student, submission=str(submitted),
                             source=str(course.source_dir(assignment)), template_db=str(templates[assignment]),
                             config_dirs=tuple(map(str, config_dirs)),
                             scratch=str(tmp / "jobs" / str(len(jobs))),    # short: ids may be long
                             sandbox_json=sandbox.to_json(), feedback=options.feedback), digest, marker))

        # Longest first, so that the last notebook to finish does not start last: the time a
        # submission of this assignment took before, or else the size of its source notebook.
        jobs.sort(key=lambda j: -_expected_seconds(state, course, j[0].assignment))
        if unsandboxed:
            say(f"WARNING: grading WITHOUT a sandbox (--allow-unsandboxed): {unsandboxed}", file=sys.stderr)
        if skipped:
            say(f"{len(skipped)} submission(s) already graded and unchanged: skipped (--force regrades them)")
        problems = dict(stored_problems)
        graded, per_job, ungraded = [], {}, {}
        if jobs:
            preflight(course, sorted(templates), templates, sandbox, tmp / "preflight", threads=pool.threads)
            progress = _Progress(len(jobs), say)
            by_job = {id(job): (digest, marker) for job, digest, marker in jobs}
            hard_limit = options.limits.notebook_timeout * _max_notebooks(templates) + 300
            attempts: dict[tuple[str, str], int] = {}
            first_failures: list[str | None] = []    # per submission, in finishing order: its first attempt's failure
            stopped: list[str] = []

            def on_result(job, result):
                from course.grading.pool import HARD_LIMIT, STOP

                key = (job.student, job.assignment)
                attempts[key] = attempts.get(key, 0) + 1
                failure = result.get("infrastructure")
                if attempts[key] == 1:
                    first_failures.append(failure and failure["kind"])
                if failure:
                    shutil.rmtree(job.scratch, ignore_errors=True)
                    why = f"{failure['kind']}: {failure['detail']}"
                    if result.get("log"):   # what nbgrader and the kernel said, for the TA
                        marker = by_job[id(job)][1]
                        marker.parent.mkdir(parents=True, exist_ok=True)
                        marker.with_suffix(".log").write_text(result["log"])
                    if stopped or (_same_failure(first_failures) and not graded):
                        stopped.append(f"the first {SAME_FAILURE_STOPS} submissions all failed the same way "
                                       f"before any student code could be blamed ({why})")
                        return STOP
                    # A job that ran past the hard limit would most likely run past it again: not retried.
                    if attempts[key] <= options.retries and failure["kind"] != HARD_LIMIT:
                        progress.retry(job, why)
                        return True
                    ungraded[key] = f"{why} ({attempts[key]} attempts)"
                    progress.finished(job, result)
                    return None
                ungraded.pop(key, None)
                digest, marker = by_job[id(job)]
                record = result.get("record") or gradebooks.zero_result(f"sqlite:///{job.template_db}", job.assignment)
                _commit(class_dir, db_url, job, result, record, config_dirs, options.feedback)
                problems[key] = [tuple(p) for p in result["problems"]]
                graded.append(key)
                per_job[key] = result.get("seconds") or 0.0
                if result.get("log"):   # nbgrader's own account of a failure, for the TA
                    marker.parent.mkdir(parents=True, exist_ok=True)
                    marker.with_suffix(".log").write_text(result["log"])
                _write_json(marker, digest | {"problems": problems[key], "graded": result["graded"],
                                              "seconds": result.get("seconds"),
                                              "seconds_autograde": result.get("seconds_autograde"),
                                              "seconds_feedback": result.get("seconds_feedback")})
                shutil.rmtree(job.scratch, ignore_errors=True)
                progress.finished(job, result)
                return None

            pool.run([job for job, _, _ in jobs], hard_limit, on_start=progress.started, on_result=on_result)
            progress.close()
            if stopped:
                _record(class_dir, db_url, graded, problems)     # what finished before the stop stands
                raise GradingStopped(stopped[0] + "; nothing was recorded for them. Try one submission with "
                                     "`nbgrader autograde` to see the whole error.")
            for job, _, _ in jobs:     # a run that stopped early: what never finished is not graded either
                key = (job.student, job.assignment)
                if key not in graded and key not in ungraded:
                    ungraded[key] = "not graded: the run stopped before it"

        _record(class_dir, db_url, graded, problems)
        all_scores = gradebooks.scores(db_url, assignments)
        _drop_csv_rows(class_dir / CSV_NAME, {k for k in ungraded if k not in all_scores})
        wanted = set(todo)
        run = GradeRun(class_dir=class_dir, assignments=assignments,
                       scores={k: v for k, v in all_scores.items() if k in wanted},
                       problems={k: v for k, v in problems.items() if v}, graded=graded, skipped=skipped,
                       seconds=time.perf_counter() - started, seconds_per_job=per_job, unsandboxed=unsandboxed,
                       ungraded=ungraded)
        _present(run, sandbox)
        (class_dir / REPORT_NAME).write_text(run.report + "\n")
        return run
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _same_failure(first_failures: list[str | None]) -> bool:
    """Did the first SAME_FAILURE_STOPS submissions all fail the same grader's way?"""
    first = first_failures[:SAME_FAILURE_STOPS]
    return len(first) == SAME_FAILURE_STOPS and first[0] is not None and len(set(first)) == 1


def _record(class_dir: Path, db_url: str, graded, problems) -> None:
    """The flags and comments a TA sees in formgrader for what was graded, and grades.csv from the gradebook."""
    from course.grading import gradebooks

    for student, assignment in graded:
        gradebooks.record_findings(class_dir, db_url, assignment, student, problems.get((student, assignment), []))
    gradebooks.export_csv(db_url, class_dir / CSV_NAME)


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


def _drop_csv_rows(path: Path, pairs: set[tuple[str, str]]) -> None:
    """Remove the rows of (student, assignment) `pairs` from nbgrader's grades CSV, which lists
    every student of the gradebook under every assignment, with a zero where nothing was recorded."""
    import csv

    if not pairs or not path.is_file():
        return
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return
    fields = list(rows[0])
    kept = [r for r in rows if (r.get("student_id"), r.get("assignment")) not in pairs]
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(kept)


def _register(course: Course, assignment: str, scratch: Path, db_url: str, config_dirs) -> None:
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

def _commit(class_dir: Path, db_url: str, job, result: dict, record: dict, config_dirs, feedback: bool) -> None:
    from course.grading import gradebooks

    _replace_tree(result.get("autograded"), class_dir / "autograded" / job.student / job.assignment)
    _replace_tree(result.get("feedback"), class_dir / "feedback" / job.student / job.assignment)
    gradebooks.merge_autograde(db_url, job.assignment, job.student, record)
    if feedback and result.get("autograded") and gradebooks.has_manual_scores(db_url, job.assignment, job.student):
        _feedback_here(class_dir, db_url, job, config_dirs)


def _replace_tree(src: str | None, dst: Path) -> None:
    """Put `src` at `dst` (or remove `dst` when `src` is None) without a moment with half a tree."""
    if src is None:
        if dst.exists():
            shutil.rmtree(dst)
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    incoming = dst.parent / f".{dst.name}.incoming"
    outgoing = dst.parent / f".{dst.name}.outgoing"
    for leftover in (incoming, outgoing):
        if leftover.exists():
            shutil.rmtree(leftover)
    shutil.copytree(src, incoming, symlinks=True)
    if dst.exists():
        os.replace(dst, outgoing)
    os.replace(incoming, dst)
    if outgoing.exists():
        shutil.rmtree(outgoing)
    for folder, dirs, files in os.walk(dst):     # the sandbox uid owned them; the TA should
        for name in [folder, *(os.path.join(folder, f) for f in files)]:
            try:
                os.lchown(name, os.getuid(), os.getgid())
            except PermissionError:
                pass


def _feedback_here(class_dir: Path, db_url: str, job, config_dirs) -> None:
    """Feedback from the real gradebook, for a submission a grader has already scored by hand."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    from course.grading.worker import load_config
    from course.plugins import feedback

    config = load_config(config_dirs)
    config.CourseDirectory.root = str(class_dir)
    config.CourseDirectory.db_url = db_url
    feedback.configure(config)
    NbGraderAPI(coursedir=CourseDirectory(config=config), config=config).generate_feedback(
        job.assignment, job.student, force=True)


# -- bookkeeping ---------------------------------------------------------------------------------------

def _config_dirs(course: Course, class_dir: Path) -> list[Path]:
    from jupyter_core.paths import jupyter_config_path

    dirs = [Path(p) for p in reversed(jupyter_config_path())]
    class_config = class_dir / "nbgrader_config.py"
    dirs.append(class_dir if class_config.is_file() else course.root)
    return dirs


def _digest(folder: Path) -> str:
    """A fingerprint of a submitted folder's files (names, links and contents)."""
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        if path.is_symlink():
            h.update(f"link {rel} {os.readlink(path)}\n".encode())
        elif path.is_file():
            h.update(f"file {rel} {path.stat().st_size}\n".encode())
            try:
                with open(path, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        h.update(chunk)
            except OSError:     # a file the TA cannot read (mode 000): the student's, never a crash
                h.update(f"unreadable {path.stat().st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def _done(marker: Path, digest: dict) -> bool:
    try:
        saved = json.loads(marker.read_text())
    except (OSError, ValueError):
        return False
    return all(saved.get(k) == v for k, v in digest.items())


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)


def _expected_seconds(state: Path, course: Course, assignment: str) -> float:
    seen = []
    for marker in (state / assignment).glob("*.json"):
        try:
            seen.append(float(json.loads(marker.read_text()).get("seconds") or 0))
        except (OSError, ValueError):
            pass
    if seen:
        return max(seen)
    return course.source_notebook(assignment).stat().st_size / 2000     # about 2 kB of notebook a second


def _max_notebooks(templates: dict[str, Path]) -> int:
    from nbgrader.api import Gradebook

    most = 1
    for assignment, path in templates.items():
        with Gradebook(f"sqlite:///{path}") as gb:
            most = max(most, len(gb.find_assignment(assignment).notebooks))
    return most


def _present(run: GradeRun, sandbox) -> None:
    from course.grading.present import problem_lines, table

    rows: dict[str, dict] = {}
    for (student, assignment), value in run.scores.items():
        rows.setdefault(student, {})[assignment] = value
    present = [a for a in run.assignments if any(a == b for _, b in run.scores)]
    run.table = table(rows, present, set(run.problems)) if rows else "(no submissions found)"
    lines = []
    if run.unsandboxed:
        lines.append(f"UNSANDBOXED: student code ran with the grader's rights (--allow-unsandboxed): {run.unsandboxed}")
    else:
        limits = sandbox.limits
        lines.append(f"sandbox: bubblewrap (no network, course files hidden), memory {limits.memory >> 20} MiB, "
                     f"{limits.processes} processes, notebook limit {limits.notebook_timeout} s")
    found = problem_lines(run.problems)
    lines.append(f"{len(run.graded)} graded, {len(run.skipped)} unchanged and skipped, "
                 + (f"{len(run.ungraded)} NOT GRADED, " if run.ungraded else "")
                 + f"{len(found)} problem(s) in {len(run.problems)} submission(s), {run.seconds:.1f} s")
    for (student, assignment), why in sorted(run.ungraded.items()):
        lines.append(f"{student} / {assignment} / grader: NOT GRADED, grade again (`course grade` grades it "
                     f"on its next run); not the student's doing: {why}")
    lines += found
    run.report = "\n".join(lines)


class _Progress:
    """A progress bar on a terminal, one line per finished submission otherwise."""

    def __init__(self, total: int, say):
        self.total, self.done, self.running, self.say = total, 0, 0, say
        self.tty = sys.stderr.isatty()
        self.started_at = time.perf_counter()

    def started(self, job) -> None:
        self.running += 1
        self._draw(f"{job.assignment}/{job.student} started")

    def retry(self, job, why: str) -> None:
        self.running -= 1
        self._draw(f"{job.assignment}/{job.student} failed ({why[:60]}), trying again", final=not self.tty)

    def finished(self, job, result) -> None:
        self.running -= 1
        self.done += 1
        mark = "ok" if result["graded"] else "NOT GRADED"
        issues = f", {len(result['problems'])} problem(s)" if result["problems"] else ""
        seconds = f"{result['seconds']:.1f} s" if result.get("seconds") else "-"
        self._draw(f"{job.assignment}/{job.student} {mark} in {seconds}{issues}", final=not self.tty)

    def _draw(self, what: str, final: bool = False) -> None:
        width = 24
        filled = width * self.done // max(1, self.total)
        bar = "#" * filled + "." * (width - filled)
        elapsed = time.perf_counter() - self.started_at
        line = f"[{bar}] {self.done}/{self.total} graded, {self.running} running, {elapsed:.0f} s  {what}"
        if self.tty:
            print("\r" + line[:150].ljust(150), end="", file=sys.stderr, flush=True)
        elif final:
            print(line, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.tty:
            print(file=sys.stderr, flush=True)
