"""Building submissions from a release notebook: what a student would hand in.

Used by the tests (reference answers, untouched releases, realistic wrong answers)
and by anyone who wants to see how a given answer scores.
"""

import copy

import nbformat

from course.notebook import cells


def with_answers(release_nb: nbformat.NotebookNode, answers: dict[str, str]) -> nbformat.NotebookNode:
    """A copy of `release_nb` whose solution cells named in `answers` hold that code instead."""
    nb = copy.deepcopy(release_nb)
    unused = set(answers)
    for cell in nb.cells:
        gid = cells.grade_id(cell)
        if cells.is_solution(cell) and gid in answers:
            cell.source = answers[gid]
            unused.discard(gid)
    if unused:
        raise KeyError(f"no solution cell named {sorted(unused)} in the notebook")
    return nb


def reference_answers(source_nb: nbformat.NotebookNode) -> dict[str, str]:
    """{grade_id: the instructor's solution code} for every solution cell of a source notebook."""
    return {cells.grade_id(c): cells.solution_code(c) for c in source_nb.cells if cells.is_solution(c)}


def tests_of(nb: nbformat.NotebookNode, exercise: str) -> list[str]:
    """The grade ids of the test cells that grade `exercise`."""
    names = cells.exercises(nb)
    return [cells.grade_id(c) for c in nb.cells
            if cells.is_test(c) and cells.exercise_of(cells.grade_id(c), names) == exercise]
