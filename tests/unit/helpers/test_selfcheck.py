"""The student's self-check: visible tests only, one line per exercise, for every assignment."""

import pytest

from course.notebook import cells
from course.authoring.check import secret_lines
from course.checkout import Course
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


@pytest.mark.slow      # runs every exercise's reference answer and visible tests (seconds for 01 and 02)
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
    wrong = next(w for w in wrong_answers("01_tensors_devices") if w.label == "top_level_only")
    wrong_visible = next(w for w in wrong_answers("01_tensors_devices") if w.label == "forgets_out_features")
    ns = namespace_with("01_tensors_devices", {wrong.exercise: wrong.code, wrong_visible.exercise: wrong_visible.code})
    selfcheck.self_check("01_tensors_devices", ns)
    printed = capsys.readouterr().out
    assert "  PASS    to_device\n" in printed   # tensors left behind two levels deep: only the hidden tests look there
    assert ("FAIL    TinyMLP (Exercise 3): TinyMLP(3, 16, 2) on a batch of 5 inputs: expected shape (5, 2), "
            "got (5, 16)") in printed
    assert "4/5 exercises pass their visible tests (1 FAIL)" in printed


def test_an_exercise_whose_cell_never_ran_is_not_run_and_names_the_cell(capsys):
    """What Run All used to leave behind when it stopped early, or a kernel restarted since: no
    NameError, but the cell to run."""
    ns = namespace_with("01_tensors_devices")
    del ns["TinyMLP"]
    results = {r.exercise: r for r in selfcheck.run("01_tensors_devices", ns)}
    assert results["TinyMLP"].status == "NOT RUN"
    assert "run the cell of Exercise 3 that defines TinyMLP" in results["TinyMLP"].message
    assert {r.status for name, r in results.items() if name != "TinyMLP"} == {"PASS"}
    selfcheck.self_check("01_tensors_devices", ns)
    printed = capsys.readouterr().out
    assert "NameError" not in printed and "NOT RUN TinyMLP (Exercise 3)" in printed


def test_code_that_crashes_inside_a_test_is_a_fail_with_its_error():
    crash = "def broadcast_shape(shape_a, shape_b):\n    return shape_a + 1\n"
    results = {r.exercise: r for r in selfcheck.run("01_tensors_devices",
                                                     namespace_with("01_tensors_devices", {"broadcast_shape": crash}))}
    assert results["broadcast_shape"].status == "FAIL"
    assert results["broadcast_shape"].message.startswith("your code raised TypeError: ")


def test_self_check_holds_no_hidden_test():
    for assignment in COURSE.assignments():
        source = cells.read(COURSE.source_notebook(assignment))
        hidden = secret_lines(source)
        shipped = "\n".join(code for tests in selfcheck.visible_tests(assignment).values() for code in tests)
        leaked = [line for line in shipped.splitlines() if line.strip() in hidden]
        assert not leaked, f"{assignment}: hidden test lines in the self-check data: {leaked[:3]}"


@pytest.mark.parametrize("assignment, exercise", [("02_training_loop", "train_one_epoch"),
                                                  ("03_gpu_memory", "amp_train_step")])
def test_a_forgotten_zero_grad_fails_a_visible_test_that_names_it(assignment, exercise):
    """The classic bug the notebook teaches is caught by the visible test, in the words of the fix."""
    wrong = next(w for w in wrong_answers(assignment) if w.exercise == exercise and w.label == "no_zero_grad")
    results = {r.exercise: r for r in selfcheck.run(assignment, namespace_with(assignment, {exercise: wrong.code}))}
    assert results[exercise].status == "FAIL", results[exercise]
    assert "optimizer.zero_grad()" in results[exercise].message, results[exercise].message
