"""What the class got wrong: the statistics of a graded class, read from nbgrader's gradebook.

Three sources, all written by `course grade`: the gradebook (each cell's score, the flag and
the report's comment), the autograded notebooks (the error a failing test cell showed) and the
per-submission markers in `.course-grade/` (how long grading took). The statistics are plain
functions of lists of numbers, so that each can be checked against values computed by hand;
`course.grading.class_report.html` draws the page. Where a statistic means nothing (one student, a test
everyone passes) it is a `Stat` with no value and a note saying why: the page never shows NaN.
"""

from __future__ import annotations

import json
import math
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from course.grading.contract import ProblemKind
from course.notebook.cells import exercise_of
from course.notebook.classdir import ClassDir

GROUP_SHARE = 0.27      # Kelley's upper and lower groups for the discrimination index
MESSAGE_CAP = 200       # characters of a failing message kept: it is the student's code talking
TOP_MESSAGES = 3        # failing messages shown per exercise
UNANSWERED = "NotImplementedError"      # the message of a test that met the release's untouched stub
SLOWEST = 5             # slowest submissions shown per assignment
# Error names the grader writes when a notebook could not run to its end (course.grading.execute's
# KERNEL_DIED and NOTEBOOK_TIMEOUT, nbclient's cell timeout): such a submission "broke".
BROKE = ("KernelDied", "KernelOutOfMemory", "NotebookTimeout", "CellTimeoutError")


@dataclass(frozen=True)
class Stat:
    """A number, or None with the reason there is none."""
    value: float | None
    note: str = ""


@dataclass(frozen=True)
class TestCell:
    """A graded cell: an autograder test, or an answer a TA grades by hand (`by_hand`)."""
    notebook: str
    name: str
    exercise: str
    max_score: float
    by_hand: bool = False


@dataclass
class Submission:
    student: str
    score: float
    cells: dict[tuple[str, str], float]         # (notebook, test cell) -> points
    failures: dict[tuple[str, str], str]        # (notebook, test cell) -> "Type: first line"
    flagged: bool = False
    tampering: bool = False
    broken: bool = False
    seconds: float | None = None
    waiting: set[tuple[str, str]] = field(default_factory=set)    # cells still to be graded by hand


@dataclass
class AssignmentData:
    name: str
    max_score: float
    tests: list[TestCell]
    submissions: list[Submission]               # sorted by student id: ties break the same way


@dataclass
class ExerciseStats:
    name: str
    max_score: float
    full: int
    partial: int
    none: int
    mean_fraction: float
    unanswered: int                             # students whose failing tests all met the released stub
    messages: list[tuple[str, int, tuple[str, ...]]]    # (message, students, test cells), most seen first
    waiting: int = 0                            # students whose answer still awaits a TA's grade


@dataclass
class CellStats:
    cell: TestCell
    passed: float                               # share of students with full marks on it
    r: Stat                                     # point-biserial against the other cells' total
    d: Stat                                     # upper-lower discrimination index


@dataclass
class AssignmentStats:
    name: str
    n: int
    max_score: float
    mean: float
    median: float
    zeros: int
    flagged: int
    tampering: int
    broken: int
    histogram: list[tuple[float, float, int]]
    exercises: list[ExerciseStats]
    cells: list[CellStats]
    seconds: dict[str, float] = field(default_factory=dict)      # student -> seconds, where recorded


# -- the statistics -----------------------------------------------------------------------------

def histogram(scores: list[float], max_score: float) -> list[tuple[float, float, int]]:
    """[(low, high, count)]: a bar per whole point up to 30 points, else 20 equal bins.

    Per point so that full marks get a bar of their own; a fractional score counts in the bar of
    its whole part. The last bin includes `max_score`.
    """
    if max_score <= 30:
        bins = [(float(i), float(i + 1)) for i in range(int(math.floor(max_score)) + 1)]
    else:
        width = max_score / 20
        bins = [(i * width, (i + 1) * width) for i in range(20)]
    counts = [0] * len(bins)
    for score in scores:
        i = next((k for k, (low, high) in enumerate(bins) if low <= score < high), len(bins) - 1)
        counts[i] += 1
    return [(low, high, count) for (low, high), count in zip(bins, counts)]


def shares(earned: list[float], max_score: float) -> tuple[int, int, int]:
    """How many students got full, partial and no marks (counts, in that order)."""
    full = sum(1 for e in earned if max_score > 0 and e >= max_score)
    none = sum(1 for e in earned if e <= 0)
    return full, len(earned) - full - none, none


def _same(values: list[float], fractions: bool) -> str:
    """Why a cell whose scores are all alike tells nothing apart."""
    if fractions and values[0] >= 1:
        return "everyone passed: it tells no one apart"
    if fractions and values[0] <= 0:
        return "nobody passed: it tells no one apart"
    return "everyone scored the same"


def point_biserial(cell: list[float], rest: list[float]) -> Stat:
    """Pearson's r between a cell's scores (fractions of its points) and each student's total of
    the other cells: the point-biserial correlation when the cell is pass/fail. Against the other
    cells, not the total, so that a cell is not correlated with itself."""
    if len(cell) < 2:
        return Stat(None, "one student: nothing to compare")
    if max(cell) == min(cell):
        return Stat(None, _same(cell, True))
    if max(rest) == min(rest):
        return Stat(None, "the other cells give everyone the same total")
    mx, mr = statistics.fmean(cell), statistics.fmean(rest)
    sxr = sum((x - mx) * (r - mr) for x, r in zip(cell, rest))
    sxx = sum((x - mx) ** 2 for x in cell)
    srr = sum((r - mr) ** 2 for r in rest)
    return Stat(sxr / math.sqrt(sxx * srr))


def discrimination(cell: list[float], totals: list[float], share: float = GROUP_SHARE) -> Stat:
    """Upper-lower index: the cell's mean (as fractions of its points) among the top `share` of
    students by total score minus that among the bottom `share`. Ties on the total keep the
    order given (students sorted by id), so the groups are the same on every run."""
    n = len(cell)
    if n < 2:
        return Stat(None, "one student: nothing to compare")
    if max(cell) == min(cell):
        return Stat(None, _same(cell, True))
    g = max(1, int(share * n + 0.5))        # round half up (Python's round() would halve to even)
    order = sorted(range(n), key=lambda i: -totals[i])
    upper, lower = order[:g], order[n - g:]
    return Stat(statistics.fmean(cell[i] for i in upper) - statistics.fmean(cell[i] for i in lower))


def common_messages(per_student: list[set[str]], top: int = TOP_MESSAGES) -> list[tuple[str, int]]:
    """The messages most students saw, each student counted once per message."""
    counts = Counter(m for seen in per_student for m in seen)
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]


def failing_message(ename: str, evalue: str, cap: int = MESSAGE_CAP) -> str:
    """'Type: first line', capped, without control or direction characters (the text comes from
    the student's code: it must not run on for pages or reorder what the page shows)."""
    first = next((line.strip() for line in str(evalue).splitlines() if line.strip()), "")
    text = f"{ename}: {first}" if first else str(ename)
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    return text if len(text) <= cap else text[: cap - 1] + "…"


def assignment_stats(data: AssignmentData) -> AssignmentStats:
    subs = data.submissions
    totals = [s.score for s in subs]
    return AssignmentStats(
        name=data.name, n=len(subs), max_score=data.max_score,
        mean=statistics.fmean(totals) if totals else 0.0,
        median=statistics.median(totals) if totals else 0.0,
        zeros=sum(1 for t in totals if t <= 0),
        flagged=sum(s.flagged for s in subs), tampering=sum(s.tampering for s in subs),
        broken=sum(s.broken for s in subs),
        histogram=histogram(totals, data.max_score),
        exercises=_exercises(data), cells=[_cell(data, t) for t in data.tests if not t.by_hand],
        seconds={s.student: s.seconds for s in subs if s.seconds is not None})


def _fraction(points: float, max_score: float) -> float:
    return points / max_score if max_score > 0 else 0.0


def _cell(data: AssignmentData, test: TestCell) -> CellStats:
    key = (test.notebook, test.name)
    x = [_fraction(s.cells.get(key, 0.0), test.max_score) for s in data.submissions]
    rest = [s.score - s.cells.get(key, 0.0) for s in data.submissions]
    passed = sum(1 for v in x if v >= 1) / len(x) if x else 0.0
    return CellStats(test, passed, point_biserial(x, rest),
                     discrimination(x, [s.score for s in data.submissions]))


def _exercises(data: AssignmentData) -> list[ExerciseStats]:
    """Per exercise, hardest first: lowest mean share of its points, then most with none."""
    found = []
    for name in dict.fromkeys(t.exercise for t in data.tests):
        tests = [t for t in data.tests if t.exercise == name]
        most = sum(t.max_score for t in tests)
        earned = [sum(s.cells.get((t.notebook, t.name), 0.0) for t in tests) for s in data.submissions]
        mean = statistics.fmean(_fraction(e, most) for e in earned) if earned else 0.0
        waiting = sum(1 for s in data.submissions if any((t.notebook, t.name) in s.waiting for t in tests))
        found.append(ExerciseStats(name, most, *shares(earned, most), mean, *_messages(data, tests), waiting))
    return sorted(found, key=lambda e: (e.mean_fraction, -e.none))


def _messages(data: AssignmentData, tests: list[TestCell]) -> tuple[int, list[tuple[str, int, tuple[str, ...]]]]:
    """(students who left the stub, [(message, students, test cells)]) for one exercise's tests.
    A stub left as released says nothing about a misconception: counted apart, not listed."""
    seen, where = [], {}        # per student, the messages; per message, the test cells showing it
    for s in data.submissions:
        mine = {(t.name, s.failures[(t.notebook, t.name)]) for t in tests if (t.notebook, t.name) in s.failures}
        for test, message in mine:
            where.setdefault(message, set()).add(test)
        seen.append({message for _, message in mine})
    unanswered = sum(1 for messages in seen if messages == {UNANSWERED})
    top = common_messages([messages - {UNANSWERED} for messages in seen])
    return unanswered, [(m, count, tuple(sorted(where[m]))) for m, count in top]


# -- reading the class --------------------------------------------------------------------------

def class_stats(class_dir: Path, assignments: list[str], db_url: str | None = None) \
        -> tuple[list[AssignmentStats], list[str]]:
    """Statistics of each of `assignments` with graded submissions, and the names of the rest; the gradebook at
    `db_url` (a PostgreSQL one, say), else the class folder's own."""
    from nbgrader.api import Gradebook

    db = ClassDir(Path(class_dir)).gradebook
    if db_url is None and not db.is_file():        # Gradebook() would make an empty one
        raise FileNotFoundError(f"no gradebook at {db}: grade the class first (course grade)")
    found, missing = [], []
    with Gradebook(db_url or f"sqlite:///{db}") as gb:
        for name in assignments:
            data = read_assignment(Path(class_dir), gb, name)
            if data is None or not data.submissions:
                missing.append(name)
            else:
                found.append(assignment_stats(data))
    return found, missing


def read_assignment(class_dir: Path, gb, name: str) -> AssignmentData | None:
    """One assignment's scores, flags, failing messages and times; None when the gradebook lacks it."""
    from nbgrader.api import MissingEntry

    try:
        assignment = gb.find_assignment(name)
    except MissingEntry:
        return None
    order: dict[str, int] = {}
    subs = [_submission(class_dir, name, sub, order)
            for sub in sorted(gb.assignment_submissions(name), key=lambda s: s.student_id)]
    tests = sorted(_test_cells(assignment),     # in notebook order, as the autograded notebooks showed it
                   key=lambda t: (t.notebook, order.get(t.name, len(order)), t.name))
    return AssignmentData(name, float(assignment.max_score), tests, subs)


def _test_cells(assignment) -> list[TestCell]:
    tests = []
    for nb in assignment.notebooks:
        answers = [c.name for c in nb.solution_cells]
        for cell in nb.grade_cells:
            by_hand = cell.name in answers      # an answer cell with points: a TA grades it
            exercise = cell.name if by_hand else exercise_of(cell.name, answers) or cell.name
            tests.append(TestCell(nb.name, cell.name, exercise, float(cell.max_score), by_hand))
    return tests


def _submission(class_dir: Path, assignment: str, sub, order: dict[str, int]) -> Submission:
    seconds, kinds = _marker(class_dir, assignment, sub.student_id)
    found = Submission(sub.student_id, float(sub.score), {}, {}, seconds=seconds,
                       tampering=ProblemKind.TAMPERING in kinds)
    for nb in sub.notebooks:
        for grade in nb.grades:
            found.cells[(nb.name, grade.name)] = float(grade.score or 0.0)
            if grade.needs_manual_grade:
                found.waiting.add((nb.name, grade.name))
        found.flagged |= bool(nb.flagged)
        path = ClassDir(class_dir).autograded(sub.student_id, assignment) / f"{nb.name}.ipynb"
        failures, broken = _read_autograded(path, order)
        found.failures.update({(nb.name, cell): m for cell, m in failures.items()})
        found.broken |= broken
    return found


def _read_autograded(path: Path, order: dict[str, int]) -> tuple[dict[str, str], bool]:
    """({test cell: failing message}, broke) from an autograded notebook. Broke: missing,
    unreadable, a stand-in without graded cells, or stopped by the kernel's death or a time
    limit. `order` learns each grade id's position (the gradebook keeps no cell order)."""
    try:
        cells = json.loads(path.read_text(errors="replace")).get("cells", [])
    except (OSError, ValueError, AttributeError):
        return {}, True
    failures, broken, graded = {}, False, False
    for cell in cells if isinstance(cells, list) else []:
        if not isinstance(cell, dict):
            continue
        meta = _nbgrader_meta(cell)
        gid = meta.get("grade_id")
        if gid:
            graded = True
            order.setdefault(gid, len(order))
        for output in cell.get("outputs") or []:
            if not isinstance(output, dict) or output.get("output_type") != "error":
                continue
            broken |= output.get("ename") in BROKE
            if gid and meta.get("grade") and not meta.get("solution"):
                failures.setdefault(gid, failing_message(str(output.get("ename")), str(output.get("evalue", ""))))
    return failures, broken or not graded


def _nbgrader_meta(cell: dict) -> dict:
    """The cell's nbgrader marks, or {} where they are not a mapping (a notebook is the student's)."""
    meta = cell.get("metadata")
    meta = meta.get("nbgrader") if isinstance(meta, dict) else None
    return meta if isinstance(meta, dict) else {}


def _marker(class_dir: Path, assignment: str, student: str) -> tuple[float | None, set[str]]:
    """How long `course grade` took on the submission and the kinds of the problems it found, from its done-marker
    (course.grading.resume; None and none where there is no readable one)."""
    try:
        saved = json.loads(ClassDir(class_dir).done_marker(student, assignment).read_text())
        seconds = float(saved["seconds"]) if saved.get("seconds") is not None else None
        return seconds, {str(p[2]) for p in saved.get("problems", []) if isinstance(p, list) and len(p) == 3}
    except (OSError, ValueError, TypeError, AttributeError, KeyError):
        return None, set()
