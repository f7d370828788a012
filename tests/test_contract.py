"""course.grading.contract: what crosses from a worker to the TA's process can be written anywhere."""

import json

from course.grading.contract import printable, printable_result


def test_a_lone_surrogate_from_a_notebook_becomes_printable_text():
    grade_id = json.loads('"\\ud800"')         # valid JSON, as a submitted notebook may hold it
    result = printable_result({"problems": [(f"cell 3 ({grade_id})", f"a duplicated grade id {grade_id}")],
                               "log": grade_id, "infrastructure": {"kind": "grader-error", "detail": grade_id}})
    text = json.dumps(result, ensure_ascii=False)
    text.encode("utf-8")                         # raised UnicodeEncodeError before
    assert result["problems"] == [("cell 3 (\\ud800)", "a duplicated grade id \\ud800")]
    assert result["log"] == "\\ud800" and result["infrastructure"]["detail"] == "\\ud800"


def test_ordinary_text_is_unchanged():
    assert printable("ü → ✓ 数") == "ü → ✓ 数"
