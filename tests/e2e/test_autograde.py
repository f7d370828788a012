"""A real `nbgrader autograde` of every assignment: reference answers, no answers, wrong answers, and correct
answers written other ways (read from its record in tests/recorded/ while nothing it depends on changed:
tests/plain_record.py)."""

import pytest

from course.notebook import cells
from grading_support import COURSE, all_right_answers, all_wrong_answers, grade, right_answers, wrong_answers

ASSIGNMENTS = COURSE.assignments()
MIN_WRONG_PER_EXERCISE = 3


def in_group(assignment):
    # One autograde run per assignment, shared by its tests: keep them on one xdist worker.
    return pytest.param(assignment, marks=pytest.mark.xdist_group(assignment), id=assignment)


@pytest.mark.e2e
@pytest.mark.parametrize("assignment", [in_group(a) for a in ASSIGNMENTS])
def test_reference_answers_get_full_marks(assignment):
    graded = grade(assignment)
    score, max_score = graded.total("reference")
    assert max_score > 0, f"{assignment} has no graded tests"
    assert score == max_score, f"reference answers scored {score}/{max_score}:\n{graded.failures('reference')}"


@pytest.mark.e2e
@pytest.mark.parametrize("assignment", [in_group(a) for a in ASSIGNMENTS])
def test_reference_answers_get_full_marks_without_the_demonstrations(assignment):
    graded = grade(assignment)
    score, max_score = graded.total("reference_lean")
    assert score == max_score, (f"the lean notebook that wrong answers are graded in loses points even with the "
                                f"reference answers ({score}/{max_score}):\n{graded.failures('reference_lean')}")


@pytest.mark.e2e
@pytest.mark.parametrize("assignment", [in_group(a) for a in ASSIGNMENTS])
def test_untouched_release_scores_zero(assignment):
    graded = grade(assignment)
    score, max_score = graded.total("untouched")
    assert max_score > 0
    assert score == 0, f"the release as handed out scored {score}/{max_score}"


@pytest.mark.e2e
@pytest.mark.parametrize("wrong", [pytest.param(w, marks=pytest.mark.xdist_group(w.assignment), id=w.id)
                                   for w in all_wrong_answers()])
def test_wrong_answer_loses_points(wrong):
    graded = grade(wrong.assignment)
    tests = graded.test_ids[wrong.exercise]
    score, max_score = graded.total(graded.wrong_student[wrong.id], tests)
    assert score < max_score, f"{wrong.id} ({wrong.code.splitlines()[0]}) kept full marks on {tests}"


@pytest.mark.e2e
@pytest.mark.parametrize("right", [pytest.param(r, marks=pytest.mark.xdist_group(r.assignment), id=r.id)
                                   for r in all_right_answers()])
def test_a_correct_answer_written_another_way_keeps_full_marks(right):
    graded = grade(right.assignment)
    student = graded.right_student[right.id]
    tests = graded.test_ids[right.exercise]
    score, max_score = graded.total(student, tests)
    assert score == max_score, (f"{right.id} ({right.code.splitlines()[0]}) scored {score}/{max_score} on {tests}:\n"
                                f"{graded.failures(student)}")


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_exercise_has_correct_answers_written_other_ways(assignment):
    exercises = cells.exercises(cells.read(COURSE.source_notebook(assignment)))
    counts = {ex: 0 for ex in exercises}
    for right in right_answers(assignment):
        assert right.exercise in counts, f"{right.path.name}: no exercise named {right.exercise} in {assignment}"
        assert right.code.startswith("# Correct"), f"{right.path.name}: first line: # Correct (how it differs): ..."
        compile(right.code, str(right.path), "exec")
        counts[right.exercise] += 1
    missing = [ex for ex, n in counts.items() if n == 0]
    assert not missing, f"exercises with no correct answer written another way in fixtures/right_answers/: {missing}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_exercise_has_realistic_wrong_answers(assignment):
    source = cells.read(COURSE.source_notebook(assignment))
    exercises = cells.exercises(source)
    counts = {ex: 0 for ex in exercises}
    for wrong in wrong_answers(assignment):
        assert wrong.exercise in counts, f"{wrong.path.name}: no exercise named {wrong.exercise} in {assignment}"
        assert wrong.code.startswith("# Mistake:"), f"{wrong.path.name}: first line must name the mistake"
        compile(wrong.code, str(wrong.path), "exec")  # a wrong answer, not a syntax error
        counts[wrong.exercise] += 1
    thin = {ex: n for ex, n in counts.items() if n < MIN_WRONG_PER_EXERCISE}
    assert not thin, f"exercises with fewer than {MIN_WRONG_PER_EXERCISE} wrong answers in tests/: {thin}"
