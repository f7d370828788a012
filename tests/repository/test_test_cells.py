"""Test cells and demo cells as a student meets them: Run All reaches the end, nothing misleads.

- Every test cell puts its checks in `with checking("<its exercise>"):`, so that its last
  statement has no value (nbgrader reads a test cell's value as partial credit, and a passing
  `check_raises` once displayed the exception it caught).
- `helpers.exercises.checking` raises whenever a notebook is graded (nbgrader's autograde and
  Validate, `course grade`'s judge outside any kernel, the self-check) and only prints while a
  student works in a kernel.
- A half-done notebook, run by nbclient as a plain Jupyter kernel runs it (no error allowed),
  reaches its last cell, and its self-check names every exercise with its state.
"""

import ast
import sys

import pytest
from nbclient import NotebookClient

from course.notebook import cells
from grading_support import COURSE
from half_done import half_done
from helpers import exercises
from helpers.checks import check_equal

ASSIGNMENTS = COURSE.assignments()


def graded_tests(nb):
    names = cells.exercises(nb)
    return [(cells.grade_id(c), cells.exercise_of(cells.grade_id(c), names), c.source)
            for c in nb.cells if cells.is_test(c)]


def structure_problem(source: str, exercise: str) -> str | None:
    """What is wrong with a test cell's shape, or None: its docstring and imports, then one
    `with checking("<exercise>"):` holding every check, so that its last statement has no value."""
    tree = ast.parse(source)
    last = tree.body[-1]
    if isinstance(last, ast.Expr):
        return "its last statement has a value, which nbgrader reads as a score"
    call = last.items[0].context_expr if isinstance(last, ast.With) and len(last.items) == 1 else None
    if not (isinstance(call, ast.Call) and getattr(call.func, "id", None) == "checking"):
        return "it does not end with `with checking(...)`"
    if [getattr(a, "value", None) for a in call.args] != [exercise]:
        return f"it checks {ast.unparse(call)} instead of checking({exercise!r})"
    if not all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in tree.body[1:-1]):
        return "only its docstring and imports may stand outside `with checking(...)`"
    return None


@pytest.mark.parametrize("kind", ["source", "release"])
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_no_test_cell_ends_with_a_value(assignment, kind):
    """The last statement of every test cell is `with checking("<exercise>"):`, holding every check."""
    path = COURSE.source_notebook(assignment) if kind == "source" else COURSE.release_notebook(assignment)
    found = graded_tests(cells.read(path))
    assert found
    problems = [(test_id, structure_problem(source, exercise)) for test_id, exercise, source in found]
    assert not [p for p in problems if p[1]], problems


@pytest.mark.parametrize("source, problem", [
    ('"""doc."""\nfrom helpers.checks import check_raises\ncheck_raises(ValueError, f, "f()")', "has a value"),
    ('"""doc."""\nfrom helpers.exercises import checking\nwith checking("g"):\n    pass', "instead of"),
    ('"""doc."""\nx = 1\nwith checking("f"):\n    pass', "only its docstring"),
    ('"""doc."""\nwith checking("f"):\n    pass\nx = 1', "does not end with"),
])
def test_the_structure_guard_catches_each_mistake(source, problem):
    assert problem in structure_problem(source, "f")


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_a_passing_test_cell_shows_one_line_that_says_so(assignment):
    """In the reference notebook, run as a student's kernel runs it: no value, no error, one line."""
    nb = cells.read(COURSE.reference_notebook(assignment))
    for test_id, exercise, _ in graded_tests(nb):
        cell = next(c for c in nb.cells if cells.grade_id(c) == test_id)
        shown = {o.get("name", o.output_type) for o in cell.outputs}
        text = "".join(o.get("text", "") for o in cell.outputs)   # a stream may come in several parts
        assert shown == {"stdout"} and text == f"✓ {exercise} passed this test\n", (test_id, cell.outputs)


class FakeKernelShell:
    kernel = object()
    compile = None


@pytest.fixture
def in_a_kernel(monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.setattr(exercises, "_shell", lambda: FakeKernelShell())


def failing_cell():
    with exercises.checking("double"):
        check_equal(1 + 1, 3, "double(1)")


def unwritten_cell():
    with exercises.checking("double"):
        raise NotImplementedError()


def test_while_a_student_works_a_failure_is_shown_message_first_and_the_run_goes_on(in_a_kernel, capsys):
    failing_cell()
    shown = capsys.readouterr()
    assert shown.out == ""
    assert shown.err.startswith("✗ double failed this test: double(1): expected 3, got 2\n")
    assert sys.last_type is AssertionError      # %tb and %debug find it
    unwritten_cell()
    assert capsys.readouterr().out.startswith("TODO double is not written yet")
    with exercises.checking("double"):
        pass
    assert capsys.readouterr().out == "✓ double passed this test\n"


@pytest.mark.parametrize("graded", ["autograde", "validate"])
def test_under_nbgrader_a_failure_raises_as_without_the_with(in_a_kernel, monkeypatch, graded, capsys):
    monkeypatch.setenv("NBGRADER_EXECUTION", graded)
    with pytest.raises(AssertionError, match=r"double\(1\): expected 3, got 2"):
        failing_cell()
    with pytest.raises(NotImplementedError):
        unwritten_cell()
    with exercises.checking("double"):
        pass
    assert capsys.readouterr() == ("", "")


def test_outside_a_kernel_and_in_the_self_check_a_failure_raises(in_a_kernel, monkeypatch):
    with exercises.strict(), pytest.raises(AssertionError):
        failing_cell()
    monkeypatch.setattr(exercises, "_shell", lambda: None)   # course grade's judge, pytest, a script
    with pytest.raises(AssertionError):
        failing_cell()


def test_an_interrupt_is_never_swallowed(in_a_kernel):
    with pytest.raises(KeyboardInterrupt):
        with exercises.checking("double"):
            raise KeyboardInterrupt


def test_a_demo_says_what_it_will_show_once_written(in_a_kernel, monkeypatch, capsys):
    with exercises.once_written("double", shows="two doubled numbers"):
        raise NotImplementedError()
    shown = capsys.readouterr().out
    assert shown == "(double is not written yet. Once written, this cell shows two doubled numbers.)\n"
    with exercises.once_written("double", shows="two doubled numbers"):
        raise TypeError("bad operand")
    assert capsys.readouterr().err.startswith("✗ double stopped this cell: TypeError: bad operand")
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(TypeError):      # graded, a demo's real error still raises
        with exercises.once_written("double", shows="two doubled numbers"):
            raise TypeError("bad operand")


@pytest.mark.e2e
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_run_all_of_a_half_done_notebook_reaches_the_self_check(assignment, tmp_path):
    """nbclient without allow_errors stops at the first cell that raises: every cell must run."""
    nb, states = half_done(assignment)
    folder = COURSE.release_dir(assignment)
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.get("execution_count") for c in code)
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not [cells.grade_id(c) for c in code if cells.is_test(c) for o in c.outputs
                if o.output_type == "execute_result"]
    report = "".join(o.get("text", "") for c in code if cells.grade_id(c) == "self_check" for o in c.outputs)
    for exercise, state in states.items():
        line = next((shown for shown in report.splitlines() if shown.split()[1:2] == [exercise]), None)
        assert line, f"the self-check does not name {exercise}:\n{report}"
        expected = {"answered": ("PASS",), "untouched": ("TODO",), "wrong": ("PASS", "FAIL")}[state]
        assert line.split()[0] in expected, line
    for cell in code:
        if cells.is_test(cell):
            exercise = cells.exercise_of(cells.grade_id(cell), list(states))
            text = "".join(o.get("text", "") for o in cell.outputs)
            if states[exercise] == "untouched":
                assert text.startswith(f"TODO {exercise} is not written yet"), text
            elif states[exercise] == "answered":
                assert text == f"✓ {exercise} passed this test\n", text
