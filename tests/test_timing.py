"""The length rule of issue 17 (course.timing) and the checks `course check` makes of it, on small
synthetic notebooks whose figures are worked out by hand."""

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from course.notebook import cells
from course.authoring.check import MAX_VISIBLE_TEST_LINES, long_test_cells
from course.authoring.template import _going_further_problems
from course.authoring.timing import GOING_FURTHER, length_problems, split, timing


def words(n: int) -> str:
    return " ".join(["word"] * n)


def solution(name: str) -> nbformat.NotebookNode:
    return new_code_cell(f"def {name}():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION",
                         metadata={"nbgrader": {"grade": False, "grade_id": name, "locked": False,
                                                "schema_version": 3, "solution": True, "task": False}})


def graded_test(name: str, visible: int = 3, hidden: int = 2) -> nbformat.NotebookNode:
    lines = ['"""Checks it."""'] + [f"assert {i} == {i}" for i in range(visible - 1)]
    lines += [cells.HIDDEN_BEGIN] + [f"assert {i} >= 0" for i in range(hidden)] + [cells.HIDDEN_END]
    return new_code_cell("\n".join(lines),
                         metadata={"nbgrader": {"grade": True, "grade_id": f"test_{name}", "locked": True,
                                                "points": 1, "schema_version": 3, "solution": False, "task": False}})


def notebook(header_minutes=None, core_words=2000, demos=10, exercises=4, further=()):
    """A title (7 words with a time, 3 without), prose, demonstration cells, exercises, a Summary (5 words)
    and an optional part."""
    title = "# Title\n\nLevel: intermediate" + (f" · Time: about {header_minutes} minutes" if header_minutes else "")
    nb = new_notebook(cells=[new_markdown_cell(title)])
    nb.cells.append(new_markdown_cell(words(core_words)))
    nb.cells += [new_code_cell(f"print({i})") for i in range(demos)]
    for k in range(exercises):
        nb.cells += [solution(f"ex{k}"), graded_test(f"ex{k}")]
    nb.cells.append(new_markdown_cell("## Summary\n\n| a | b |\n|---|---|\n| 1 | 2 |"))  # 5 words: Summary a b 1 2
    nb.cells += list(further)
    return nb


def test_measured_minutes_follow_the_rule():
    t = timing(notebook(header_minutes=60, core_words=2000, demos=10, exercises=4))
    assert (t.words, t.code_cells, t.exercises, t.header_minutes) == (2012, 10, 4, 60)
    assert t.minutes == 2012 / 200 + 0.5 * 10 + 7 * 4      # 43.06
    assert length_problems(notebook(header_minutes=43, core_words=2000, demos=10, exercises=4)) == []


def test_going_further_is_not_counted():
    further = [new_markdown_cell(GOING_FURTHER + "\n\n" + words(3000)), new_code_cell("print('more')")]
    with_part = notebook(header_minutes=43, further=further)
    core, rest = split(with_part)
    assert len(rest) == 2 and rest[0].source.startswith(GOING_FURTHER)
    assert timing(with_part) == timing(notebook(header_minutes=43))
    assert length_problems(with_part) == []
    assert _going_further_problems(with_part) == []


def test_a_look_alike_heading_does_not_open_the_optional_part():
    lookalike = notebook(header_minutes=43, further=[new_markdown_cell("## Going further\n\n" + words(3000))])
    assert timing(lookalike).words > 5000
    assert any("does not open the optional part" in p for p in _going_further_problems(lookalike))


def test_too_long_core_fails_naming_both_figures():
    long = notebook(header_minutes=75, core_words=6000, demos=20, exercises=5)   # 30.06 + 10 + 35 min
    problems = length_problems(long)
    assert len(problems) == 1 and "75.1 min" in problems[0] and "over 70" in problems[0], problems
    assert "header says 75" in problems[0]


def test_header_far_from_the_measure_fails_naming_both_figures():
    assert length_problems(notebook(header_minutes=29)) == []      # measured 43.06: within 15
    assert length_problems(notebook(header_minutes=58)) == []
    problems = length_problems(notebook(header_minutes=59))
    assert problems == ["the header says 59 min but the core path measures 43.1 min (more than 15 min apart)"]
    assert length_problems(notebook(header_minutes=28))
    assert "states no time" in length_problems(notebook(header_minutes=None))[0]


def test_header_wordings():
    for title, minutes in [("Time: about 60 minutes", 60), ("Estimated time: ~45 min", 45), ("time: 30 min", 30)]:
        nb = new_notebook(cells=[new_markdown_cell(f"# T\n\n{title}")])
        assert timing(nb).header_minutes == minutes, title


def test_graded_cell_in_going_further_fails():
    further = [new_markdown_cell(GOING_FURTHER), solution("extra"), graded_test("extra")]
    problems = length_problems(notebook(header_minutes=43, further=further))
    assert len(problems) == 2 and all("'## Going further (optional)'" in p for p in problems), problems
    assert "'extra'" in problems[0] and "'test_extra'" in problems[1]


def test_going_further_before_the_summary_fails():
    nb = notebook(header_minutes=43)
    nb.cells.insert(3, new_markdown_cell(GOING_FURTHER))
    assert any("before the Summary" in p for p in _going_further_problems(nb))


def test_visible_test_lines_exclude_the_hidden_block():
    limit = MAX_VISIBLE_TEST_LINES
    nb = new_notebook(cells=[graded_test("ok", visible=limit, hidden=50), graded_test("long", visible=limit + 1)])
    problems = long_test_cells(nb, "nb.ipynb")
    assert [p.reason for p in problems] == [f"test cell 'test_long' shows a student {limit + 1} lines, over {limit}; "
                                            "move its machinery into helpers"]


def test_the_careful_estimate_reads_demos_by_length_and_exercises_by_size():
    from course.authoring.timing import careful_minutes

    nb = notebook(header_minutes=60, core_words=1400, demos=10, exercises=4)
    # 1412 words at 140 a minute; 10 one-line demos at 0.5 + 0.1; 4 one-line answers at 3 + 0.5.
    assert abs(careful_minutes(nb) - (1412 / 140 + 10 * 0.6 + 4 * 3.5)) < 1e-9
    longer = notebook(header_minutes=60, core_words=1400, demos=10, exercises=4)
    longer.cells[2].source = "\n".join(f"print({i})" for i in range(11))   # one demo of 11 lines
    assert abs(careful_minutes(longer) - careful_minutes(nb) - 1.0) < 1e-9
