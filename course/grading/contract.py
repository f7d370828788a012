"""What the parts of grading hand each other: a job, what grading it gives back (`GradeResult`), a run's results,
the kinds of failure (`FailureKind`), the executor's events (`Event`), the names of the errors the grader writes
into cells, and the class folder's fixed names. Data only: no part of
grading is imported here but the sandbox's limits."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Callable, NamedTuple, Protocol

from course.grading.sandbox.policy import Limits

if TYPE_CHECKING:
    from nbformat.notebooknode import NotebookNode

# -- the class folder -------------------------------------------------------------------------------



@dataclass
class GradeOptions:
    jobs: int
    force: bool = False
    allow_unsandboxed: bool = False
    limits: Limits = field(default_factory=Limits)
    feedback: bool = True
    retries: int = 2        # more attempts for a submission whose grading failed for the grader's reasons
    db_url: str | None = None   # the gradebook (`--db`); None: nbgrader_config.py's CourseDirectory.db_url, else
                                # the class folder's gradebook.db


# -- a job and a run ----------------------------------------------------------------------------------

class ProblemKind(StrEnum):
    """What kind of thing went wrong with a submission: every decision about a problem is made from this."""

    UNGRADABLE = "ungradable"       # a notebook missing or unreadable: it scored zero (and nbgrader's refusal is explained)
    CELLS = "cells"                 # graded or locked cells deleted, duplicated, retyped or edited; foreign grade ids
    TAMPERING = "tampering"         # code that looks like tampering with the grading: feedback is held back
    FILES = "files"                 # files handed in beside the notebooks, left out
    NBGRADER = "nbgrader"           # nbgrader refused the submission, or took grading marks off to grade it
    RUN = "run"                     # what the sandbox and the guarded executor stopped while the notebook ran
    LEFT_RUNNING = "left-running"   # processes still running when a kernel ended
    FEEDBACK = "feedback"           # feedback held back or not written


class Problem(NamedTuple):
    """One line of the report about a submission: where (a notebook, "nbgrader", "feedback"), what, and its kind."""

    where: str
    what: str
    kind: ProblemKind

    @classmethod
    def from_json(cls, item) -> "Problem":
        where, what, kind = item
        return cls(printable(where), printable(what), ProblemKind(kind))


# The format of what the done-markers store of a result (`GradeResult.stored`): a marker of an older format is
# graded again.
RESULT_FORMAT = 2


FEEDBACK_HELD_BACK = ("no feedback written while cells look like tampering; after a look, take the flag "
                      "off in formgrader, then its Generate Feedback (or `nbgrader generate_feedback`) writes it")


@dataclass(frozen=True)
class Job:
    """One submission to grade, and where everything it needs is."""

    assignment: str
    student: str
    submission: str          # class_dir/submitted/<student>/<assignment>
    source: str              # the course's source/<assignment>: its data files, and the order of its cells
    template_db: str         # a gradebook holding only the assignment's definitions
    config_dirs: tuple[str, ...]  # where nbgrader_config.py files are read from, lowest priority first
    scratch: str             # an empty folder for this job
    sandbox_json: str
    feedback: bool = True


# The id every submission is graded under in its scratch course, which holds that one submission alone:
# nbgrader reads a student id as a glob pattern and builds file names from it, so the real id (any folder
# name a TA received: glob characters, 255 bytes, any alphabet) never reaches nbgrader or a file name the
# worker makes; the TA's process records the grades under the real id.
SCRATCH_STUDENT = "student"


class Executor(Protocol):
    """Where jobs are graded: each Job goes to `course.grading.worker.grade_submission` in a process of the
    executor's, and the `GradeResult` it returns comes back to `on_result` in the TA's process, which alone
    commits it (both are plain, picklable data). `course.grading.pool.Pool` is the local one, long-lived
    processes on this machine; a cluster's executor stands beside it with the same three methods.

    `run` calls on_start(job) as a job starts and on_result(job, result) as it ends; on_result's True asks for
    the job again (after the others), `course.grading.pool.STOP` starts no more. A job whose process never
    answers (it was lost, or ran past `hard_limit` seconds) comes back as `GradeResult.failed(job,
    FailureKind.WORKER_LOST or HARD_LIMIT, why)`."""

    def run(self, jobs: list[Job], hard_limit: float, on_start=None, on_result=None) -> None: ...

    def close(self) -> None:
        """Done: let the processes end."""

    def stop(self) -> None:
        """Interrupted: end every process now, running jobs included."""


# How `course.grading.batch.grade` makes its executor: (processes, CPU threads per kernel) -> Executor.
ExecutorFactory = Callable[[int, int], Executor]


class GradingStopped(RuntimeError):
    """Grading cannot work here (every kernel fails the same way); the message says why. Nothing was recorded."""


@dataclass
class GradeRun:
    class_dir: Path
    assignments: list[str]
    scores: dict[tuple[str, str], tuple[float, float]]
    problems: dict[tuple[str, str], list[Problem]]
    graded: list[tuple[str, str]]
    skipped: list[tuple[str, str]]
    seconds: float
    seconds_per_job: dict[tuple[str, str], float]
    unsandboxed: str | None
    ungraded: dict[tuple[str, str], str] = field(default_factory=dict)   # not graded, and why: grade again
    db_url: str = ""                # the gradebook recorded into
    executor_notes: list[str] = field(default_factory=list)    # what the executor has to say (a worker retired)
    table: str = ""
    report: str = ""

    @property
    def students(self) -> list[str]:
        return sorted({s for s, _ in self.scores})


# -- kinds of failure and the errors written into cells --------------------------------------------------

KERNEL_DIED = "KernelDied"
KERNEL_OUT_OF_MEMORY = "KernelOutOfMemory"     # it died, and its memory group counted a kill
NOTEBOOK_TIMEOUT = "NotebookTimeout"
NOT_RUN = "CellNotRun"
OUTPUT_LOST = "OutputLost"
NOTE = "[course grade: "     # starts the notes this module adds to a cell's output

EVENTS_FILE = "events.jsonl"


class FailureKind(StrEnum):
    """A failure that is the grader's, not the student's: the submission gets no score and is graded again
    (`GradeResult.failure`). Every decision about such a failure is made from this."""

    # The guarded executor's (course.grading.execute), written as events (`Event`) and raised as
    # `InfrastructureFailure`:
    KERNEL_START = "kernel-start"       # the kernel or its sandbox did not start
    SETUP_FAILED = "setup-failed"       # an instructor's cell failed before any student code ran
    JUDGE_FAILED = "judge-failed"       # the judge (course.grading.verdicts.zygote) could not start
    # The worker's (course.grading.worker):
    GRADER_ERROR = "grader-error"       # the grading code itself raised
    # The executor's (course.grading.pool, or any other): the job's process never answered.
    WORKER_LOST = "worker-lost"         # the grading process died
    HARD_LIMIT = "hard-limit"           # the job ran past the hard limit and was stopped (not tried again)
    BAD_RESULT = "bad-result"           # a cluster's worker sent back what is not the job's result: refused
    # The TA's process's, never in a result: it could not record a finished submission (the next run grades it).
    RECORD_FAILED = "record-failed"


class EventKind(StrEnum):
    """What the guarded executor did beyond a cell's outputs that is no failure of the grader's (`Event`)."""

    LEFT_RUNNING = "left-running"           # `count` processes still running when the notebook's kernel ended
    OUTPUT_DROPPED = "output-dropped"       # `bytes` of cell `cell`'s output over the cap were dropped
    PROCESSES_STOPPED = "processes-stopped"  # `count` processes cell `cell` left at the process limit, stopped


# The same kinds by their old names, for the modules that write and word them.
KERNEL_START = FailureKind.KERNEL_START
SETUP_FAILED = FailureKind.SETUP_FAILED
JUDGE_FAILED = FailureKind.JUDGE_FAILED
GRADER_ERROR = FailureKind.GRADER_ERROR
RECORD_FAILED = FailureKind.RECORD_FAILED
LEFT_RUNNING = EventKind.LEFT_RUNNING
OUTPUT_DROPPED = EventKind.OUTPUT_DROPPED
PROCESSES_STOPPED = EventKind.PROCESSES_STOPPED
# The failures the guarded executor writes as events.
INFRASTRUCTURE_KINDS = (KERNEL_START, SETUP_FAILED, JUDGE_FAILED)

# The exceptions (by type name) a cell's code gets at the sandbox's limits: fork at RLIMIT_NPROC, allocation at
# RLIMIT_DATA. Grading decides from these names, never from an exception's message.
PROCESS_LIMIT_ERRORS = ("BlockingIOError",)
MEMORY_ERRORS = ("MemoryError",)
JUDGE_STOPPED = "JudgeStopped"      # a cell's error: the judge died or broke its protocol on the kernel's answers
ERROR_NAMES = (KERNEL_DIED, KERNEL_OUT_OF_MEMORY, NOTEBOOK_TIMEOUT, NOT_RUN, OUTPUT_LOST, JUDGE_STOPPED)


class InfrastructureFailure(RuntimeError):
    """The notebook could not be run for a reason that is not the student's (`kind` says which)."""

    def __init__(self, kind: str, detail: str):
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail = kind, detail


class KernelGone(ConnectionError):
    """The kernel stopped serving in the middle of a test (it died, or closed the connection)."""


class AnswerTimeout(TimeoutError):
    """The kernel did not answer within the test's time."""


# -- what the executor did, and what a worker returns ------------------------------------------------------

@dataclass(frozen=True)
class Event:
    """One line of `EVENTS_FILE`, which the guarded executor writes in the job's scratch folder (the kernel cannot
    reach it) and the worker reads once per autograde run (`read_events`). `kind` is an `EventKind`, or one of
    `INFRASTRUCTURE_KINDS` (a `FailureKind`, with its `detail`)."""

    kind: FailureKind | EventKind
    notebook: str                   # the notebook's name, without .ipynb
    cell: int | None = None         # OUTPUT_DROPPED, PROCESSES_STOPPED: the cell, counted from 1
    count: int | None = None        # LEFT_RUNNING, PROCESSES_STOPPED: how many processes
    bytes: int | None = None        # OUTPUT_DROPPED: how many bytes
    detail: str | None = None       # a failure's: what happened

    _NEEDS = {LEFT_RUNNING: ("count",), OUTPUT_DROPPED: ("cell", "bytes"), PROCESSES_STOPPED: ("cell", "count"),
              **{kind: ("detail",) for kind in INFRASTRUCTURE_KINDS}}

    @property
    def failure(self) -> bool:
        """Is this the grader's failure (the notebook was not run for a reason not the student's)?"""
        return self.kind in INFRASTRUCTURE_KINDS

    @classmethod
    def from_json(cls, data) -> "Event":
        """An event from its JSON object; ValueError when it is not one."""
        if type(data) is not dict:
            raise ValueError(f"an event is a JSON object, not {type(data).__name__}")
        kind = _enum(data.get("kind"), (EventKind, FailureKind), INFRASTRUCTURE_KINDS + tuple(EventKind), "event kind")
        given = {name: _typed(data, name, str if name == "detail" else (int, float)) for name in cls._NEEDS[kind]}
        return cls(kind, _typed(data, "notebook", str), **given)

    def to_json(self) -> dict:
        """Its JSON object: what `course.grading.execute` writes, a line of `EVENTS_FILE`."""
        return {"notebook": self.notebook, "kind": str(self.kind)} | {name: getattr(self, name)
                                                                       for name in self._NEEDS[self.kind]}


def read_events(path: Path) -> list[Event]:
    """The events of `EVENTS_FILE` at `path`, in the order written (none when there is no file)."""
    lines = path.read_text().splitlines() if path.is_file() else []
    return [Event.from_json(json.loads(line)) for line in lines]


@dataclass(frozen=True)
class GraderFailure:
    """Why a submission has no score: a failure of the grader's, not the student's."""

    kind: FailureKind
    detail: str


@dataclass(frozen=True)
class GradeResult:
    """What grading one submission gives back (`course.grading.worker.grade_submission`, or an executor for a job
    whose process never answered), for the TA's process to commit. Plain data: it pickles, and `to_json` and
    `from_json` carry it through JSON unchanged. Made by `scored` (nbgrader graded the submission, or scored it
    zero) or `failed` (the grader's failure: `failure` says why, and there is no record)."""

    assignment: str
    student: str                    # the real id (the scratch course grades it under SCRATCH_STUDENT)
    scratch: str | None             # the job's scratch folder, which the paths below are in
    graded: bool = False            # nbgrader graded the notebooks (False: scored zero, or a failure)
    problems: tuple[Problem, ...] = ()
    record: dict | None = None      # what nbgrader recorded (course.grading.gradebooks.autograde_result or
                                    # zero_result); None for a failure
    autograded: str | None = None   # the autograded notebooks' folder, when graded
    feedback: str | None = None     # the feedback's folder, when written
    failure: GraderFailure | None = None
    log: str = ""                   # nbgrader's and the kernel's account of a failed run, for the TA
    seconds: float | None = None    # the whole job (None: it never answered)
    seconds_autograde: float | None = None
    seconds_feedback: float | None = None

    @classmethod
    def scored(cls, job: Job, *, graded: bool, record: dict, problems=(), autograded: str | None = None,
               feedback: str | None = None, log: str = "", seconds: float | None = None,
               seconds_autograde: float | None = None, seconds_feedback: float | None = None) -> "GradeResult":
        """nbgrader graded the submission (`graded`), or scored it zero (a notebook missing, nbgrader's refusal)."""
        return cls(job.assignment, job.student, job.scratch, graded, tuple(problems), record, autograded, feedback,
                   None, log, seconds, seconds_autograde, seconds_feedback)

    @classmethod
    def failed(cls, job: Job, kind: FailureKind, detail: str, *, problems=(), log: str = "",
               seconds: float | None = None, seconds_autograde: float | None = None,
               seconds_feedback: float | None = None) -> "GradeResult":
        """The grader's failure of `kind`: no score, no record, nothing to copy; `problems` found before it."""
        return cls(job.assignment, job.student, job.scratch, False, tuple(problems), None, None, None,
                   GraderFailure(FailureKind(kind), detail), log, seconds, seconds_autograde, seconds_feedback)

    def printable(self) -> "GradeResult":
        """This result with every text a submission could have put in it made printable (`printable`)."""
        return replace(self, problems=tuple(Problem(printable(p.where), printable(p.what), ProblemKind(p.kind))
                                            for p in self.problems),
                       log=printable(self.log),
                       failure=self.failure and GraderFailure(self.failure.kind, printable(self.failure.detail)))

    def stored(self) -> dict:
        """What a done-marker keeps of it (course.grading.resume; its form is `RESULT_FORMAT`'s)."""
        return {"problems": list(self.problems), "graded": self.graded, "seconds": self.seconds,
                "seconds_autograde": self.seconds_autograde, "seconds_feedback": self.seconds_feedback}

    def to_json(self) -> dict:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["problems"] = [list(p) for p in self.problems]
        data["failure"] = self.failure and {"kind": str(self.failure.kind), "detail": self.failure.detail}
        return data

    @classmethod
    def from_json(cls, data) -> "GradeResult":
        """A result from `to_json`'s form; ValueError when it is not one (a field missing, unknown or mistyped)."""
        if type(data) is not dict:
            raise ValueError(f"a result is a JSON object, not {type(data).__name__}")
        names = {f.name for f in fields(cls)}
        if set(data) != names:
            raise ValueError(f"a result's fields are {sorted(names)}: missing {sorted(names - set(data))}, "
                             f"unknown {sorted(set(data) - names)}")
        try:
            problems = tuple(Problem.from_json(p) for p in _typed(data, "problems", list))
        except (TypeError, ValueError) as error:
            raise ValueError(f"a result's problems: {error}") from None
        failure = _typed(data, "failure", dict, none=True)
        if failure is not None:
            if set(failure) != {"kind", "detail"}:
                raise ValueError(f"a failure is its kind and detail, not {sorted(failure)}")
            failure = GraderFailure(_enum(failure["kind"], (FailureKind,), tuple(FailureKind), "failure kind"),
                                    _typed(failure, "detail", str))
        result = cls(_typed(data, "assignment", str), _typed(data, "student", str),
                     _typed(data, "scratch", str, none=True), _typed(data, "graded", bool), problems,
                     _typed(data, "record", dict, none=True), _typed(data, "autograded", str, none=True),
                     _typed(data, "feedback", str, none=True), failure, _typed(data, "log", str),
                     *(_typed(data, name, (int, float), none=True)
                       for name in ("seconds", "seconds_autograde", "seconds_feedback")))
        if failure is not None and (result.graded or result.record is not None or result.autograded or result.feedback):
            raise ValueError("a failure's result has no score, no record and nothing to copy")
        if failure is None and result.record is None:
            raise ValueError("a result that is no failure has nbgrader's record")
        return result


def _typed(data: dict, name: str, kind, none: bool = False):
    """`data[name]`, which must be of `kind` (or None when `none`); ValueError otherwise (KeyError included)."""
    if name not in data:
        raise ValueError(f"{name} missing")
    value = data[name]
    if value is None and none:
        return None
    kinds = kind if type(kind) is tuple else (kind,)
    if not any(type(value) is k for k in kinds):
        raise ValueError(f"{name} is {type(value).__name__}, not {' or '.join(k.__name__ for k in kinds)}")
    return value


def _enum(value, enums, allowed, what: str):
    for enum in enums:
        try:
            member = enum(value)
        except ValueError:
            continue
        if member in allowed:
            return member
    raise ValueError(f"not a {what}: {value!r}")


def printable(text: str) -> str:
    """`text` that any file, terminal or database takes: a student's notebook can put lone surrogates
    (`"\\ud800"` in its JSON) in a grade id or an output, which UTF-8 refuses to encode."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8") if type(text) is str else str(text)


def answers_prefix(worker: int) -> str:
    """The name start of a worker's answer-socket folders in the temporary folder (a worker killed at the hard
    limit cannot remove its own: the pool removes them by this name)."""
    return f"course-answers-{worker}-"


def error_output(ename: str, evalue: str) -> NotebookNode:
    # Imported here: a process that only unpickles a result need not import nbformat (half a second).
    from nbformat.notebooknode import NotebookNode

    return NotebookNode(output_type="error", ename=ename, evalue=evalue,
                        traceback=[f"\x1b[0;31m{ename}\x1b[0m: {evalue}"])
