"""What went wrong with a submission, one line per problem.

A submission is looked at three ways: the notebook as handed in (`submission_problems`:
missing, renamed, unreadable, graded cells deleted, duplicated, retyped, edited, code
that looks like tampering), nbgrader's own verdict and the autograded notebook
(`run_problems`: nbgrader refused it; what the sandbox and `GuardedExecute` stopped: time
and memory limits, a dead kernel, the network, files outside the notebook's folder,
replaced test machinery).
Wrong answers are not problems: the scores show them.
Every line the report says about a submission is worded here (the worker and the scratch course call the
small constructors below); each carries its kind (`contract.ProblemKind`), from which grading decides.
`course.grading.present` shows them.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from course.grading import integrity
from course.grading.contract import (
    FEEDBACK_HELD_BACK,
    JUDGE_STOPPED,
    KERNEL_DIED,
    KERNEL_OUT_OF_MEMORY,
    LEFT_RUNNING,
    NOT_RUN,
    NOTEBOOK_TIMEOUT,
    OUTPUT_DROPPED,
    OUTPUT_LOST,
    MEMORY_ERRORS,
    PROCESS_LIMIT_ERRORS,
    PROCESSES_STOPPED,
    Problem,
    ProblemKind,
)
from course.notebook import cells
from course.notebook.cells import GRADING_KEYS, HIDDEN_NOTE, released_metadata, without_hidden

_NETWORK = re.compile(r"Network is unreachable|name resolution|Name or service not known|"
                      r"No address associated|Connection refused|\[Errno (101|99|-2|-3)\]")
_FILES = re.compile(r"No such file or directory|Permission denied|Read-only file system|"
                    r"unable to open database|readonly database")
# Only the wording of a report line about the student's own exception is chosen from its message (it is all
# there is of it); what grading does about a limit is decided from kinds (course.grading.execute).
_MEMORY = re.compile(r"can't allocate memory|cannot allocate memory|not enough memory", re.IGNORECASE)
_PROCESSES = re.compile(r"Resource temporarily unavailable|can't start new thread")

TAMPERING = "looks like tampering with the grading"     # what the static scan says of a cell


def _nbgrader_meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _lines(source: str) -> list[str]:
    return [line.strip() for line in source.splitlines() if line.strip()]


def _released_lines(source: str) -> list[str]:
    """The lines a student's copy of a test cell has: nbgrader's release drops the hidden region."""
    return [line for line in _lines(without_hidden(source)) if line != HIDDEN_NOTE]


def submission_problems(submitted: Path, template_db: str, assignment: str,
                        handed_in_folder: Path | None = None) -> list[Problem]:
    """Problems of the notebooks in `submitted`: missing, unreadable, graded cells broken, tampering.
    `handed_in_folder` (default `submitted`): where to look for the notebooks handed in under other names."""
    from nbgrader.api import Gradebook

    problems: list[Problem] = []
    with Gradebook(f"sqlite:///{template_db}") as gb:
        expected = {nb.name: nb for nb in gb.find_assignment(assignment).notebooks}
        folder = handed_in_folder or submitted
        handed_in = sorted(p.name for p in folder.glob("*.ipynb")) if folder.is_dir() else []
        for name, definition in sorted(expected.items()):
            path = submitted / f"{name}.ipynb"
            if not path.is_file():
                others = [n for n in handed_in if n != f"{name}.ipynb"]
                hint = f" (handed in instead: {', '.join(others)}; renamed?)" if others else ""
                problems.append(Problem(f"{name}.ipynb", f"notebook missing{hint}: scored zero", ProblemKind.UNGRADABLE))
                continue
            try:
                nb = nbformat.read(str(path), as_version=4)
            except Exception as error:  # noqa: BLE001 - anything that is not a notebook
                problems.append(Problem(f"{name}.ipynb", f"not a readable notebook ({type(error).__name__}: "
                                                         f"{_first_line(str(error))}): scored zero",
                                        ProblemKind.UNGRADABLE))
                continue
            problems += _structure(nb, definition, f"{name}.ipynb")
    return _dedupe(problems)


def run_problems(run: dict | None, autograded: Path | None, explained: bool = False,
                 events: list[dict] = ()) -> list[Problem]:
    """Problems from nbgrader's verdict, the autograded notebooks and the guarded executor's `events`
    (course.grading.execute: output dropped, processes stopped, in the cell they concern).

    `explained`: the submission's own problems already say why nbgrader could not grade it.
    """
    problems: list[Problem] = []
    if run is not None and not run.get("success") and not explained:
        problems.append(Problem("nbgrader", "nbgrader could not grade this submission: " + nbgrader_error(run),
                                ProblemKind.NBGRADER))
    if autograded is not None:
        for path in sorted(autograded.glob("*.ipynb")):
            mine = [e for e in events if f"{e.get('notebook')}.ipynb" == path.name]
            problems += _execution(nbformat.read(str(path), as_version=4), path.name, mine)
    return _dedupe(problems)


def left_running_problems(events: list[dict]) -> list[Problem]:
    """A line for each kernel that ended with processes still running (course.grading.execute's events)."""
    problems = []
    for event in events:
        if event.get("kind") == LEFT_RUNNING:
            many = f"{event['count']} processes were" if event["count"] > 1 else "1 process was"
            problems.append(Problem(f"{event['notebook']}.ipynb", f"{many} still running when its kernel ended; "
                                    "all were stopped before the next submission", ProblemKind.LEFT_RUNNING))
    return problems


def not_a_valid_notebook(where: str, error: str) -> Problem:
    return Problem(where, f"not a valid notebook ({error}): scored zero", ProblemKind.UNGRADABLE)


def invalid_marks_taken_off(where: str, cells_named: list[str]) -> Problem:
    return Problem(where, "grading marks that are not valid nbgrader metadata taken off " + ", ".join(cells_named)
                          + "; such a cell is graded as if deleted", ProblemKind.CELLS)


def timestamp_left_out() -> Problem:
    return Problem("submission", "timestamp.txt left out: it holds no time nbgrader can read, so the submission is "
                                 "graded without a submission time (no late penalty)", ProblemKind.FILES)


def files_left_out(count: int) -> Problem:
    return Problem("submission", f"{count} other {'file' if count == 1 else 'files'} handed in left out: only the "
                                 "notebooks are graded", ProblemKind.FILES)


def graded_after_repair(refused: dict, cells_named: list[str]) -> Problem:
    return Problem("nbgrader", f"refused the notebook as handed in ({nbgrader_error(refused)}); graded after taking "
                               f"the grading marks off {', '.join(cells_named)}", ProblemKind.NBGRADER)


def feedback_held_back() -> Problem:
    return Problem("feedback", FEEDBACK_HELD_BACK, ProblemKind.FEEDBACK)


def feedback_not_written(error: str) -> Problem:
    return Problem("feedback", "no feedback written: " + error, ProblemKind.FEEDBACK)


def _structure(nb, definition, where: str) -> list[Problem]:
    """Graded cells deleted, duplicated, retyped or edited; student cells that look like tampering."""
    problems = []
    source_cells = {c.name: c for c in definition.source_cells}
    graded = {c.name for c in definition.grade_cells} | {c.name for c in definition.solution_cells} \
        | {c.name for c in definition.task_cells}
    known = graded | set(source_cells)
    points = {c.name: c.max_score for c in definition.grade_cells}
    seen: dict[str, list[int]] = {}
    for i, cell in enumerate(nb.cells, 1):
        gid = _nbgrader_meta(cell).get("grade_id")
        if gid:
            seen.setdefault(gid, []).append(i)
    for gid in sorted(known):
        where_cells = seen.get(gid, [])
        locked = gid in source_cells and source_cells[gid].locked
        if not where_cells and locked:      # course.grading.worker puts the instructor's cell back
            what = "graded cell" if gid in graded else "locked cell"
            problems.append(Problem(where, f"{what} '{gid}' was deleted; graded with the original put back",
                                    ProblemKind.CELLS))
        elif not where_cells and gid in points:
            problems.append(Problem(where, f"graded cell '{gid}' was deleted: it scores zero", ProblemKind.CELLS))
        elif not where_cells and gid in graded:     # an answer cell the tests grade: its code may still be there
            problems.append(Problem(where, f"answer cell '{gid}' is missing (deleted, or its nbgrader metadata "
                                           "removed); the tests grade whatever the notebook defines", ProblemKind.CELLS))
        elif len(where_cells) > 1:
            problems.append(Problem(where, f"graded cell '{gid}' appears {len(where_cells)} times "
                                           f"(cells {', '.join(map(str, where_cells))})", ProblemKind.CELLS))
    for gid, where_cells in sorted(seen.items()):
        if gid not in known:
            problems.append(Problem(where, f"cell {where_cells[0]} carries grade id '{gid}', which this assignment "
                                           "does not have", ProblemKind.CELLS))
    for i, cell in enumerate(nb.cells, 1):
        gid = _nbgrader_meta(cell).get("grade_id")
        original = source_cells.get(gid)
        if original is not None:
            if cell.cell_type != original.cell_type:
                problems.append(Problem(where, f"graded cell '{gid}' was changed from {original.cell_type} "
                                               f"to {cell.cell_type}", ProblemKind.CELLS))
            elif original.locked and _lines(cell.source) not in (_released_lines(original.source),
                                                                 _lines(original.source)):
                problems.append(Problem(where, f"locked cell '{gid}' was edited (nbgrader grades the original "
                                               "instead)", ProblemKind.CELLS))
            elif _metadata_edited(cell, released_metadata(gid, original.locked, points.get(gid))):
                what = "locked cell" if original.locked else "answer cell"
                problems.append(Problem(where, f"{what} '{gid}' had its grading metadata edited; graded "
                                               "with the original's", ProblemKind.CELLS))
        if cell.cell_type == "code" and not (original is not None and original.locked):
            reasons = integrity.suspicious_code(cell.source)
            if reasons:
                label = f"cell {i}" + (f" ({gid})" if gid else "")
                problems.append(Problem(where, f"{label} {TAMPERING}: {'; '.join(reasons)}", ProblemKind.TAMPERING))
    return problems


def _metadata_edited(cell, released: dict) -> bool:
    return any(_nbgrader_meta(cell).get(key) != released.get(key) for key in GRADING_KEYS)


def _execution(nb, where: str, events: list[dict]) -> list[Problem]:
    """What the sandbox and the guarded executor stopped, read from the autograded notebook and the executor's
    events for it (never from the notes in a cell's output, which a student can print too)."""
    problems = []
    not_run = []
    by_cell: dict[int, dict[str, dict]] = {}
    for event in events:
        if event.get("kind") in (OUTPUT_DROPPED, PROCESSES_STOPPED):
            by_cell.setdefault(event["cell"], {})[event["kind"]] = event
    for i, cell in enumerate(nb.cells, 1):
        if cell.cell_type != "code":
            continue
        label = f"cell {i}" + (f" ({_nbgrader_meta(cell).get('grade_id')})" if _nbgrader_meta(cell).get("grade_id") else "")
        test = cells.is_test(cell)
        found = by_cell.get(i, {})
        if OUTPUT_DROPPED in found:
            problems.append(Problem(where, f"{label}: printed too much; "
                                           f"{found[OUTPUT_DROPPED]['bytes'] / 2**20:.1f} MB of output dropped",
                                    ProblemKind.RUN))
        if PROCESSES_STOPPED in found:
            problems.append(Problem(where, f"{label}: left {found[PROCESSES_STOPPED]['count']} processes running "
                                           "(a fork bomb?); they were stopped", ProblemKind.RUN))
        for output in cell.get("outputs", []):
            if output.output_type != "error":
                continue
            line = _classify(output.ename, output.evalue, test)
            if output.ename in (NOT_RUN, NOTEBOOK_TIMEOUT) and not_run:
                not_run.append(i)
                continue
            if output.ename in (NOT_RUN, NOTEBOOK_TIMEOUT):
                not_run.append(i)
            if line:
                problems.append(Problem(where, f"{label}: {line}", ProblemKind.RUN))
    if len(not_run) > 1:
        problems.append(Problem(where, f"{len(not_run)} cells from cell {not_run[0]} on were not run", ProblemKind.RUN))
    return problems


def _classify(ename: str, evalue: str, test: bool) -> str | None:
    text = f"{ename}: {evalue}"
    if ename == KERNEL_OUT_OF_MEMORY:
        return ("the kernel's processes together reached its memory limit here; the cells before it were re-run in "
                "a fresh kernel")
    if ename == KERNEL_DIED:
        return "the kernel died here (os._exit, a crash or a resource limit); the cells before it were re-run in a fresh kernel"
    if ename == NOTEBOOK_TIMEOUT:
        return f"notebook time limit reached ({evalue})"
    if ename == NOT_RUN:
        return f"not run: {evalue}"
    if ename == OUTPUT_LOST:
        return "its output never finished arriving (messages from the kernel were lost)"
    if ename == JUDGE_STOPPED:
        return f"the test's judge stopped on what the notebook answered ({_first_line(evalue)})"
    if ename == "CellTimeoutError":
        return "ran past the time limit for one cell and was interrupted"
    if ename in MEMORY_ERRORS or _MEMORY.search(evalue):
        return f"memory limit reached ({_first_line(text)})"
    if ename in PROCESS_LIMIT_ERRORS or _PROCESSES.search(evalue):
        return f"process limit reached ({_first_line(text)})"
    if ename == "SystemExit":
        return "called sys.exit() (the cell fails; grading went on)"
    if _NETWORK.search(text):
        return f"tried to use the network, which the sandbox does not have ({_first_line(text)})"
    if _FILES.search(text) and not test:
        return f"file access failed, as the sandbox shows only a copy of the submission's other files ({_first_line(text)})"
    if test or ename in ("NotImplementedError", "KeyboardInterrupt"):
        return None         # a wrong or missing answer, or the interrupt behind a timeout: the score says it
    return _first_line(text)


def nbgrader_error(run: dict) -> str:
    """The error behind a failed nbgrader run, in one line."""
    for text in (run.get("log") or "", run.get("error") or ""):
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        causes = [line for line in lines if re.match(r"^[\w.]+(Error|Exception|Exit|MissingEntry)\b:?", line)
                  and "NbGraderException" not in line]
        if causes:
            return _first_line(causes[-1])
    return "no message"


def _first_line(text: str, width: int = 160) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 3] + "..."


def _dedupe(problems):
    seen, out = set(), []
    for p in problems:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out
