"""The student's self-check: visible tests only, one line per exercise, for every assignment."""

import pytest

from course import cells
from course.check import secret_lines
from course.paths import Course
from grading_support import ROOT, wrong_answers
from helpers import selfcheck

COURSE = Course(ROOT)


def namespace_with(assignment, answers: dict[str, str] | None = None) -> dict:
    """What a student's kernel holds after running the setup cell and the solution cells."""
    source = cells.read(COURSE.source_notebook(assignment))
    ns: dict = {}
    for cell in source.cells:
        if cells.grade_id(cell) == "setup" or (cells.is_solution(cell) and cell.cell_type == "code"):
            code = cells.solution_code(cell)
            if answers is not None and cells.grade_id(cell) in answers:
                code = answers[cells.grade_id(cell)]
            exec(compile(code, cells.grade_id(cell), "exec"), ns)
    return ns


@pytest.mark.parametrize("assignment", COURSE.assignments())
def test_reference_answers_pass_every_visible_test(assignment):
    results = selfcheck.run(assignment, namespace_with(assignment))
    assert [r.exercise for r in results] == cells.exercises(cells.read(COURSE.source_notebook(assignment)))
    assert all(r.status == "PASS" for r in results), [(r.exercise, r.message) for r in results if r.status != "PASS"]


@pytest.mark.parametrize("assignment", COURSE.assignments())
def test_unwritten_exercises_are_reported_as_todo(assignment):
    stubs = {cells.grade_id(c): c.source for c in cells.read(COURSE.release_notebook(assignment)).cells
             if cells.is_solution(c) and c.cell_type == "code"}
    results = selfcheck.run(assignment, namespace_with(assignment, stubs))
    assert {r.status for r in results} == {"TODO"}, [(r.exercise, r.status, r.message) for r in results]


def test_a_failing_exercise_says_what_was_expected_and_got(capsys):
    wrong = next(w for w in wrong_answers("01_tensors_devices") if w.mistake == "ignores_mps")
    wrong_visible = next(w for w in wrong_answers("01_tensors_devices") if w.mistake == "forgets_out_features")
    ns = namespace_with("01_tensors_devices", {wrong.exercise: wrong.code, wrong_visible.exercise: wrong_visible.code})
    selfcheck.self_check("01_tensors_devices", ns)
    printed = capsys.readouterr().out
    assert "PASS  pick_device" in printed   # ignoring MPS is only caught by the hidden tests
    assert "FAIL  TinyMLP: TinyMLP(3, 16, 2) on a batch of 5 inputs: expected shape (5, 2), got (5, 16)" in printed
    assert "6/7 exercises pass" in printed


def test_self_check_holds_no_hidden_test():
    for assignment in COURSE.assignments():
        source = cells.read(COURSE.source_notebook(assignment))
        hidden = secret_lines(source)
        shipped = "\n".join(code for tests in selfcheck.visible_tests(assignment).values() for code in tests)
        leaked = [line for line in shipped.splitlines() if line.strip() in hidden]
        assert not leaked, f"{assignment}: hidden test lines in the self-check data: {leaked[:3]}"
