"""What `course grade` reports of a submission, read from its autograded notebook
(course.grading.diagnose.run_problems),
on notebooks made here: one line per problem, in today's words (the report's lines are matched by TAs and by
fixtures/bad_submissions/), and none for a wrong answer, which the score already shows."""

import nbformat
from nbformat.v4 import new_code_cell, new_notebook, new_output

from course.grading.contract import (
    KERNEL_DIED,
    NOT_RUN,
    NOTE,
    NOTEBOOK_TIMEOUT,
    OUTPUT_DROPPED,
    PROCESSES_STOPPED,
    ProblemKind,
)
from course.grading.diagnose import run_problems


def _cell(error=None, grade_id=None, test=False, text=None):
    meta = {"nbgrader": {"grade_id": grade_id, "grade": test, "solution": not test, "locked": test, "points": 1,
                         "schema_version": 3}} if grade_id else {}
    outputs = [new_output("stream", name="stdout", text=text)] if text else []
    if error:
        outputs.append(new_output("error", ename=error[0], evalue=error[1], traceback=[]))
    return new_code_cell("pass", metadata=meta, outputs=outputs)


def problems(tmp_path, *cells, run=None, events=()) -> list[str]:
    nbformat.write(new_notebook(cells=list(cells)), str(tmp_path / "nb.ipynb"))
    found = run_problems(run, tmp_path, events=list(events))
    assert {p.where for p in found} <= {"nb.ipynb", "nbgrader"}
    assert {p.kind for p in found} <= {ProblemKind.RUN, ProblemKind.NBGRADER}
    return [p.what for p in found]


def test_a_wrong_or_unwritten_answer_is_no_problem(tmp_path):
    assert problems(tmp_path, _cell(("AssertionError", "expected 3, got 2"), "test_f", test=True),
                    _cell(("NotImplementedError", ""), "f"),
                    _cell(("FileNotFoundError", "[Errno 2] No such file or directory: 'w.pt'"), "test_g",
                          test=True)) == []


def test_each_limit_and_escape_is_named_in_its_cell(tmp_path):
    found = problems(
        tmp_path,
        _cell(("MemoryError", "")),
        _cell(("BlockingIOError", "[Errno 11] Resource temporarily unavailable")),
        _cell(("SystemExit", "0")),
        _cell(("OSError", "[Errno 101] Network is unreachable")),
        _cell(("FileNotFoundError", "[Errno 2] No such file or directory: '/course/source'"), "f"),
        _cell(("CellTimeoutError", "A cell timed out")),
        _cell((KERNEL_DIED, "")),
    )
    assert found == [
        "cell 1: memory limit reached (MemoryError:)",
        "cell 2: process limit reached (BlockingIOError: [Errno 11] Resource temporarily unavailable)",
        "cell 3: called sys.exit() (the cell fails; grading went on)",
        "cell 4: tried to use the network, which the sandbox does not have "
        "(OSError: [Errno 101] Network is unreachable)",
        "cell 5 (f): file access failed, as the sandbox shows only a copy of the submission's other files "
        "(FileNotFoundError: [Errno 2] No such file or directory: '/course/source')",
        "cell 6: ran past the time limit for one cell and was interrupted",
        "cell 7: the kernel died here (os._exit, a crash or a resource limit); the cells before it were re-run in "
        "a fresh kernel",
    ]


def test_a_notebook_time_limit_is_one_line_and_the_cells_left_are_counted(tmp_path):
    found = problems(tmp_path, _cell(), _cell((NOTEBOOK_TIMEOUT, "900 s")), _cell((NOT_RUN, "time was up")),
                     _cell((NOT_RUN, "time was up")))
    assert found == ["cell 2: notebook time limit reached (900 s)", "3 cells from cell 2 on were not run"]


def test_dropped_output_and_stopped_processes_are_read_from_the_executors_events(tmp_path):
    events = [{"notebook": "nb", "kind": OUTPUT_DROPPED, "cell": 2, "bytes": 3 << 20},
              {"notebook": "nb", "kind": PROCESSES_STOPPED, "cell": 2, "count": 40},
              {"notebook": "other", "kind": OUTPUT_DROPPED, "cell": 1, "bytes": 1 << 20}]
    assert problems(tmp_path, _cell(), _cell(("BlockingIOError", "[Errno 11] Resource temporarily unavailable")),
                    events=events) == [
        "cell 2: printed too much; 3.0 MB of output dropped",
        "cell 2: left 40 processes running (a fork bomb?); they were stopped",
        "cell 2: process limit reached (BlockingIOError: [Errno 11] Resource temporarily unavailable)"]


def test_a_note_the_student_printed_is_no_problem(tmp_path):
    """The notes the executor adds to a cell's output are for reading; a cell can print the same words."""
    note = f"\n{NOTE}{3 << 20} more bytes of output were dropped: each cell keeps at most 1048576 bytes]\n" \
           f"\n{NOTE}200 processes this cell left running were stopped]\n"
    assert problems(tmp_path, _cell(text="x" * 10 + note)) == []


def test_nbgrader_refusing_a_submission_is_one_line_unless_already_explained(tmp_path):
    run = {"success": False, "log": "[AutogradeApp | ERROR] oops\nValueError: bad notebook\n", "error": ""}
    assert problems(tmp_path, _cell(), run=run) == [
        "nbgrader could not grade this submission: ValueError: bad notebook"]
    assert run_problems(run, None, explained=True) == []
