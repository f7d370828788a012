"""The class report's statistics on a small gradebook made by hand, against values computed by hand.

Assignment `hw`, one notebook, three exercises; four test cells: test_ex_a (2 points),
test_ex_b_one and test_ex_b_two (1 each), test_ex_c (1, nobody passes). Six students:

    student  t_a  t_b1  t_b2  t_c  total  autograded notebook          marker
    a         2    1     1    0     4                                   5.0 s
    b         2    1     0    0     3    flagged: tampering             7.5 s
    c         2    0     1    0     3                                   6.0 s
    d         0    1     1    0     2                                   9.0 s
    e         0    0     1    0     1    flagged: KernelDied in a cell  4.0 s
    f         0    0     0    0     0    flagged: a stand-in            (none)

`hw_two` has two students who both pass its one test cell and an answer graded by hand (a's
is graded, b's not yet); `hw_one` has one student.
"""

import html.parser
import json
import math
import re

import nbformat
import pytest
from nbgrader.api import Gradebook

from course.grading.class_report.stats import (AssignmentStats, class_stats, discrimination, failing_message, histogram,
                                 point_biserial)
from course.grading.class_report.html import page, write_report
from course.grading.gradebooks import REPORT_COMMENT, quick_schema_stamp
from course.notebook.classdir import ClassDir
from course.grading.contract import Problem, ProblemKind
from course.grading.diagnose import TAMPERING

# nbgrader's add_submission warns through SQLAlchemy on every submission made by hand.
pytestmark = pytest.mark.filterwarnings("ignore:Object of type:Warning")

SCORES = {"a": (2, 1, 1, 0), "b": (2, 1, 0, 0), "c": (2, 0, 1, 0), "d": (0, 1, 1, 0), "e": (0, 0, 1, 0),
          "f": (0, 0, 0, 0)}
TESTS = (("test_ex_a", 2), ("test_ex_b_one", 1), ("test_ex_b_two", 1), ("test_ex_c", 1))
SECONDS = {"a": 5.0, "b": 7.5, "c": 6.0, "d": 9.0, "e": 4.0}
SHAPE = "AssertionError: expected shape (5, 2), got (5, 16)"
# (student, test cell) -> (ename, evalue) its autograded notebook shows
ERRORS = {("d", "test_ex_a"): ("AssertionError", "expected shape (5, 2), got (5, 16)\nTraceback line two"),
          ("e", "test_ex_a"): ("AssertionError", "expected shape (5, 2), got (5, 16)"),
          ("c", "test_ex_b_one"): ("ValueError", "not broadcastable"),
          ("e", "test_ex_b_one"): ("ValueError", "not broadcastable"),
          ("b", "test_ex_b_two"): ("ValueError", "not broadcastable"),
          **{(s, "test_ex_c"): ("NotImplementedError", "") for s in "abcde"}}


def _define(gb, assignment, exercises, tests):
    gb.add_assignment(assignment)
    gb.add_notebook(assignment, assignment)
    for name in exercises:
        gb.add_solution_cell(name, assignment, assignment)
    for name, points in tests:
        gb.add_grade_cell(name, assignment, assignment, max_score=points, cell_type="code")


def _submit(gb, assignment, student, scores: dict):
    if student not in {s.id for s in gb.students}:
        gb.add_student(student)
    gb.add_submission(assignment, student)
    for name, points in scores.items():
        gb.find_grade(name, assignment, assignment, student).auto_score = points


def _autograded(folder, student, assignment, cells):
    nb = nbformat.v4.new_notebook(cells=cells)
    path = folder / "autograded" / student / assignment / f"{assignment}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))


def _test_cell(name, error=None):
    cell = nbformat.v4.new_code_cell("assert True", metadata={
        "nbgrader": {"grade_id": name, "grade": True, "solution": False, "locked": True, "points": 1}})
    if error:
        cell.outputs = [nbformat.v4.new_output("error", ename=error[0], evalue=error[1], traceback=[])]
    return cell


@pytest.fixture(scope="module")
def made_class(tmp_path_factory):
    folder = tmp_path_factory.mktemp("class")
    with quick_schema_stamp(), Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as gb:
        _define(gb, "hw", ["ex_a", "ex_b", "ex_c"], TESTS)
        for student, scores in SCORES.items():
            _submit(gb, "hw", student, {name: s for (name, _), s in zip(TESTS, scores)})
        for student in "bef":
            gb.find_submission_notebook("hw", "hw", student).flagged = True
        gb.find_comment("ex_a", "hw", "hw", "b").auto_comment = (
            f"{REPORT_COMMENT}\n- hw.ipynb: cell 3 {TAMPERING}: replaces torch.allclose")

        gb.find_comment("ex_a", "hw", "hw", "e").auto_comment = f"{REPORT_COMMENT}\n- hw.ipynb: the kernel died"
        _define(gb, "hw_two", ["only"], [("test_only", 1)])
        gb.add_solution_cell("essay", "hw_two", "hw_two")       # an answer a TA grades by hand
        gb.add_grade_cell("essay", "hw_two", "hw_two", max_score=2, cell_type="markdown")
        _define(gb, "hw_one", ["only"], [("test_only", 1)])
        for student in "ab":
            _submit(gb, "hw_two", student, {"test_only": 1})
        _submit(gb, "hw_one", "a", {"test_only": 1})
        graded = gb.find_grade("essay", "hw_two", "hw_two", "a")
        graded.manual_score, graded.needs_manual_grade = 2, False      # as formgrader saves a TA's score
        gb.find_grade("essay", "hw_two", "hw_two", "b").needs_manual_grade = True
        gb.db.commit()
    for student in "abcde":
        cells = [_test_cell(name, ERRORS.get((student, name))) for name, _ in TESTS]
        if student == "e":      # a student cell the kernel died in
            died = nbformat.v4.new_code_cell("import os; os._exit(1)")
            died.outputs = [nbformat.v4.new_output("error", ename="KernelDied", evalue="", traceback=[])]
            cells.insert(0, died)
        _autograded(folder, student, "hw", cells)
    _autograded(folder, "f", "hw", [nbformat.v4.new_markdown_cell("# hw.ipynb could not be graded")])
    # What course grade's done-markers hold (course.grading.resume): a problem's kind says tampering, not the
    # comment's words; e's marker names the words without the kind.
    kinds = {"b": ProblemKind.TAMPERING, "e": ProblemKind.RUN}
    for student, seconds in SECONDS.items():
        marker = ClassDir(folder).done_marker(student, "hw")
        marker.parent.mkdir(parents=True, exist_ok=True)
        problems = [Problem("hw.ipynb", f"cell 3 {TAMPERING}?", kinds[student])] if student in kinds else []
        marker.write_text(json.dumps({"seconds": seconds, "problems": problems}))
    return folder


@pytest.fixture(scope="module")
def stats(made_class) -> dict[str, AssignmentStats]:
    found, missing = class_stats(made_class, ["hw", "hw_two", "hw_one", "not_in_gradebook"])
    assert missing == ["not_in_gradebook"]
    return {a.name: a for a in found}


def test_distribution_mean_median_zeros(stats):
    hw = stats["hw"]
    assert (hw.n, hw.max_score, hw.zeros) == (6, 5, 1)
    assert hw.mean == pytest.approx(13 / 6)             # 4 + 3 + 3 + 2 + 1 + 0
    assert hw.median == pytest.approx(2.5)              # between 3 and 2
    # One bar per point, 0 to 5: totals 0, 1, 2, 3, 3, 4.
    assert [(low, count) for low, _, count in hw.histogram] == [(0, 1), (1, 1), (2, 1), (3, 2), (4, 1), (5, 0)]


def test_histogram_of_many_points_has_twenty_bins_and_the_last_holds_full_marks():
    bars = histogram([0, 4.9, 5, 40, 100], 100)
    assert len(bars) == 20 and bars[0][:2] == (0, 5) and bars[-1][:2] == (95, 100)
    counts = {low: count for low, _, count in bars if count}
    assert counts == {0: 2, 5: 1, 40: 1, 95: 1}


def test_flagged_tampering_and_broken(stats):
    hw = stats["hw"]
    assert (hw.flagged, hw.tampering, hw.broken) == (3, 1, 2)    # b, e, f; b; e (kernel died), f (stand-in)


def test_exercises_full_partial_none_hardest_first(stats):
    got = [(x.name, x.max_score, x.full, x.partial, x.none) for x in stats["hw"].exercises]
    # ex_c: nobody (mean 0); ex_a: a, b, c full (mean 6/12); ex_b: a, d full, b, c, e half, f none (mean 7/12).
    assert got == [("ex_c", 1, 0, 0, 6), ("ex_a", 2, 3, 0, 3), ("ex_b", 2, 2, 3, 1)]
    assert [x.mean_fraction for x in stats["hw"].exercises] == pytest.approx([0, 6 / 12, 7 / 12])


def test_failing_messages_grouped_per_exercise(stats):
    messages = {x.name: x.messages for x in stats["hw"].exercises}
    assert messages["ex_a"] == [(SHAPE, 2, ("test_ex_a",))]          # d and e; the second line is dropped
    assert messages["ex_b"] == [("ValueError: not broadcastable", 3, ("test_ex_b_one", "test_ex_b_two"))]  # c, e; b
    assert messages["ex_c"] == []                                   # the stub's NotImplementedError: not answered
    unanswered = {x.name: x.unanswered for x in stats["hw"].exercises}
    assert unanswered == {"ex_a": 0, "ex_b": 0, "ex_c": 5}          # a to e; f's stand-in shows nothing


def test_point_biserial_against_the_other_cells(stats):
    r = {c.cell.name: c.r for c in stats["hw"].cells}
    # test_ex_a: x = 1,1,1,0,0,0 against the rest 2,1,1,2,1,0: Sxr = 0.5, Sxx = 1.5, Srr = 11 - 49/6.
    assert r["test_ex_a"].value == pytest.approx(0.5 / math.sqrt(1.5 * 17 / 6))     # = 1/sqrt(17)
    # test_ex_b_one: x = 1,1,0,1,0,0 against 3,2,3,1,1,0: Sxr = 1, Sxx = 1.5, Srr = 24 - 50/3.
    assert r["test_ex_b_one"].value == pytest.approx(1 / math.sqrt(1.5 * 22 / 3))  # = 1/sqrt(11)
    # test_ex_b_two: x = 1,0,1,1,1,0 against 3,3,2,1,0,0: Sxr = 6 - (2/3) * 9 = 0.
    assert r["test_ex_b_two"].value == pytest.approx(0)
    assert r["test_ex_c"] .value is None and "nobody passed" in r["test_ex_c"].note


def test_discrimination_index_top_and_bottom_27_percent(stats):
    d = {c.cell.name: c.d for c in stats["hw"].cells}
    # 27% of 6 is 1.62: groups of 2. By total: a 4, b 3, c 3 (tie: b by id), d 2, e 1, f 0.
    # Upper a, b; lower e, f.
    assert d["test_ex_a"].value == pytest.approx(1 - 0)
    assert d["test_ex_b_one"].value == pytest.approx(1 - 0)
    assert d["test_ex_b_two"].value == pytest.approx(0.5 - 0.5)        # (1 + 0)/2 - (1 + 0)/2
    assert d["test_ex_c"].value is None and "nobody passed" in d["test_ex_c"].note
    assert discrimination([0, 1, 0, 1], [4, 3, 3, 0]).value == pytest.approx(0 - 1)   # groups of 1: a, then d


def test_passed_share_per_cell(stats):
    passed = {c.cell.name: c.passed for c in stats["hw"].cells}
    assert passed == pytest.approx({"test_ex_a": 3 / 6, "test_ex_b_one": 3 / 6, "test_ex_b_two": 4 / 6,
                                    "test_ex_c": 0})
    assert [c.cell.name for c in stats["hw"].cells] == [name for name, _ in TESTS]   # notebook order


def test_degenerate_cases_say_why_instead_of_a_number(stats):
    two, one = stats["hw_two"].cells[0], stats["hw_one"].cells[0]
    assert two.r.value is None and "everyone passed" in two.r.note
    assert two.d.value is None and "everyone passed" in two.d.note
    assert one.r.value is None and "one student" in one.r.note and one.d.value is None
    assert (stats["hw_one"].mean, stats["hw_one"].median, stats["hw_one"].zeros) == (1, 1, 0)
    assert point_biserial([0, 1, 0], [2, 2, 2]).note.startswith("the other cells")
    text = re.sub(r"data:image/svg+xml;base64,[^'\"]*", "", page("made", list(stats.values()), []))
    assert not re.search(r"\bnan\b", text, re.IGNORECASE) and "—" in text


def test_an_answer_graded_by_hand_is_an_exercise_not_a_test_cell(stats):
    two = stats["hw_two"]
    essay = next(x for x in two.exercises if x.name == "essay")
    assert (essay.max_score, essay.full, essay.partial, essay.none, essay.waiting) == (2, 1, 0, 1, 1)
    assert [c.cell.name for c in two.cells] == ["test_only"]
    assert (two.max_score, two.mean) == (3, 2)                  # a: 1 + 2, b: 1 + 0 until graded
    assert "1 still to grade" in page("made", [two], [])


def test_grading_time_from_the_markers(stats):
    assert stats["hw"].seconds == SECONDS               # f has no marker: not timed, not zero
    text = page("made", [stats["hw"]], [])
    slowest = text[text.index("slowest submissions"):]
    assert [slowest.index(f"<td>{s}</td>") for s in "dbcae"] == sorted(slowest.index(f"<td>{s}</td>") for s in "dbcae")


def test_failing_message_is_one_capped_line_without_control_characters():
    assert failing_message("ValueError", "\n  first line  \nsecond") == "ValueError: first line"
    assert failing_message("NotImplementedError", "") == "NotImplementedError"
    long = failing_message("E", "x" * 500)
    assert len(long) == 200 and long.endswith("…")
    assert failing_message("E", "abc\u202edef\x1b[31m") == "E: abc def [31m"


class _Tags(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_a_hostile_message_and_student_id_are_shown_as_text(tmp_path):
    hostile = "<script>alert(1)</script><img src=x onerror=alert(2)>' onmouseover='x\"><marquee>"
    student = "<marquee>mallory</marquee>"
    with quick_schema_stamp(), Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        _define(gb, "hw", ["ex"], [("test_ex", 1)])
        _submit(gb, "hw", student, {"test_ex": 0})
        _submit(gb, "hw", "bob", {"test_ex": 1})
        gb.db.commit()
    _autograded(tmp_path, student, "hw", [_test_cell("test_ex", ("ValueError", hostile + "y" * 1000))])
    marker = ClassDir(tmp_path).done_marker(student, "hw")
    marker.parent.mkdir(parents=True)
    marker.write_text(json.dumps({"seconds": 3.0}))
    text = write_report(tmp_path, ["hw"]).read_text()
    parser = _Tags()
    parser.feed(text)
    tags = [tag for tag, _ in parser.tags]
    assert "script" not in tags and "marquee" not in tags
    assert all(attrs.get("src", "").startswith("data:image/svg+xml;base64,")
               for tag, attrs in parser.tags if tag == "img")
    assert tags.count("img") == 2                       # the two figures, no image of the student's
    assert not any(name.startswith("on") for _, attrs in parser.tags for name in attrs)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text and "&lt;marquee&gt;mallory" in text
    assert "y" * 200 not in text                        # capped
