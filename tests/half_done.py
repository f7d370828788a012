"""A student's notebook half done: what the walk-through tests (browser, nbclient) run.

Exercises 1, 3, 5, ... are answered with the reference solution, except the last of them, which
gets the first wrong answer kept in fixtures/wrong_answers/ (where it has one); the others are left
untouched, as released.
"""

from course.notebook import cells
from course.submissions import reference_answers, with_answers
from grading_support import COURSE, wrong_answers


def half_done(assignment: str):
    """(notebook, {exercise: "answered" | "wrong" | "untouched"})."""
    release = cells.read(COURSE.release_notebook(assignment))
    source = cells.read(COURSE.source_notebook(assignment))
    names = cells.exercises(source)
    reference = reference_answers(source)
    answered = names[::2]
    answers = {name: reference[name] for name in answered}
    states = {name: ("answered" if name in answered else "untouched") for name in names}
    wrong = next((w for w in wrong_answers(assignment) if w.exercise == answered[-1]), None)
    if wrong is not None:
        answers[wrong.exercise] = wrong.code
        states[wrong.exercise] = "wrong"
    return with_answers(release, answers), states
