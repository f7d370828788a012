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


def test_a_done_marker_of_another_format_or_unreadable_is_graded_again(tmp_path):
    from course.grading.contract import RESULT_FORMAT
    from course.grading.resume import done_problems, write_json

    digest = {"submission": "abc", "definition": "def", "format": RESULT_FORMAT}
    marker = tmp_path / "ann.json"
    problem = Problem("nb.ipynb", "cell 2: memory limit reached (MemoryError:)", ProblemKind.RUN)
    write_json(marker, digest | {"problems": [problem]})
    assert done_problems(marker, digest) == [problem]
    assert done_problems(marker, digest | {"submission": "changed"}) is None
    write_json(marker, {"submission": "abc", "definition": "def", "problems": [["nb.ipynb", "no kind"]]})
    assert done_problems(marker, digest) is None, "a marker from before problems had kinds was taken as done"
    for bad in ([["nb.ipynb", "x", "no-such-kind"]], [["nb.ipynb"]], "x", None):
        write_json(marker, digest | {"problems": bad})
        assert done_problems(marker, digest) is None, bad
    assert done_problems(tmp_path / "missing.json", digest) is None
