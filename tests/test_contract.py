"""course.grading.contract: what crosses from a worker to the TA's process can be written anywhere."""

import json

from course.grading.contract import Problem, ProblemKind, printable, printable_result


def test_a_lone_surrogate_from_a_notebook_becomes_printable_text():
    grade_id = json.loads('"\\ud800"')         # valid JSON, as a submitted notebook may hold it
    result = printable_result({"problems": [Problem(f"cell 3 ({grade_id})", f"a duplicated grade id {grade_id}",
                                                    ProblemKind.CELLS)],
                               "log": grade_id, "infrastructure": {"kind": "grader-error", "detail": grade_id}})
    text = json.dumps(result, ensure_ascii=False)
    text.encode("utf-8")                         # raised UnicodeEncodeError before
    assert result["problems"] == [Problem("cell 3 (\\ud800)", "a duplicated grade id \\ud800", ProblemKind.CELLS)]
    assert result["log"] == "\\ud800" and result["infrastructure"]["detail"] == "\\ud800"


def test_ordinary_text_is_unchanged():
    assert printable("ü → ✓ 数") == "ü → ✓ 数"


def test_a_problem_survives_the_done_marker_with_its_kind():
    problem = Problem("nb.ipynb", "cell 2 looks like tampering with the grading: x", ProblemKind.TAMPERING)
    again = Problem.from_json(json.loads(json.dumps(problem)))
    assert again == problem and again.kind is ProblemKind.TAMPERING
