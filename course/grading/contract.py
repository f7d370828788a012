"""What the parts of grading hand each other: a job, a run's results, the kinds of failure and the names
of the errors the grader writes into cells, and the class folder's fixed names. Data only: no part of
grading is imported here but the sandbox's limits."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Callable, NamedTuple, Protocol

from nbformat.notebooknode import NotebookNode

from course.grading.sandbox.policy import Limits

# -- the class folder -------------------------------------------------------------------------------



@dataclass
class GradeOptions:
    jobs: int
    force: bool = False
    allow_unsandboxed: bool = False
    limits: Limits = field(default_factory=Limits)
    feedback: bool = True
    retries: int = 2        # more attempts for a submission whose grading failed for the grader's reasons


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


# The format of what a worker reports and the done-markers store: a marker of an older format is graded again.
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
    executor's (a Job is plain, picklable data, and so is the result dict), and each result comes back to
    `on_result` in the TA's process, which alone commits it. `course.grading.pool.Pool` is the local one, long-lived
    processes on this machine; a cluster's executor stands beside it with the same three methods.

    `run` calls on_start(job) as a job starts and on_result(job, result) as it ends; on_result's True asks for
    the job again (after the others), `course.grading.pool.STOP` starts no more. A result that is the grader's
    failure (a lost process, a job past `hard_limit` seconds) carries `result["infrastructure"]`."""

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
# Kinds of failure that are the grader's, not the student's (InfrastructureFailure.kind).
KERNEL_START = "kernel-start"       # the kernel or its sandbox did not start
SETUP_FAILED = "setup-failed"       # an instructor's cell failed before any student code ran
LEFT_RUNNING = "left-running"       # an event: processes still running when the kernel ended
OUTPUT_DROPPED = "output-dropped"   # an event: `bytes` of cell `cell`'s output over the cap were dropped
PROCESSES_STOPPED = "processes-stopped"  # an event: `count` processes cell `cell` left at the process limit, stopped
# The exceptions (by type name) a cell's code gets at the sandbox's limits: fork at RLIMIT_NPROC, allocation at
# RLIMIT_DATA. Grading decides from these names, never from an exception's message.
PROCESS_LIMIT_ERRORS = ("BlockingIOError",)
MEMORY_ERRORS = ("MemoryError",)
JUDGE_FAILED = "judge-failed"       # the judge (course.grading.verdicts.zygote) could not start
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


GRADER_ERROR = "grader-error"       # the grading code itself raised
RECORD_FAILED = "record-failed"     # the TA's process could not record a finished submission (the next run grades it)
INFRASTRUCTURE_KINDS = (KERNEL_START, SETUP_FAILED, JUDGE_FAILED)


def printable(text: str) -> str:
    """`text` that any file, terminal or database takes: a student's notebook can put lone surrogates
    (`"\\ud800"` in its JSON) in a grade id or an output, which UTF-8 refuses to encode."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8") if type(text) is str else str(text)


def printable_result(result: dict) -> dict:
    """A worker's result with every text a submission could have put in it made printable."""
    result["problems"] = [Problem(printable(p.where), printable(p.what), ProblemKind(p.kind))
                          for p in result.get("problems", [])]
    for key in ("log",):
        if type(result.get(key)) is str:
            result[key] = printable(result[key])
    if type(result.get("infrastructure")) is dict:
        result["infrastructure"] = {k: printable(v) if type(v) is str else v
                                    for k, v in result["infrastructure"].items()}
    return result


def answers_prefix(worker: int) -> str:
    """The name start of a worker's answer-socket folders in the temporary folder (a worker killed at the hard
    limit cannot remove its own: the pool removes them by this name)."""
    return f"course-answers-{worker}-"


def error_output(ename: str, evalue: str) -> NotebookNode:
    return NotebookNode(output_type="error", ename=ename, evalue=evalue,
                        traceback=[f"\x1b[0;31m{ename}\x1b[0m: {evalue}"])
