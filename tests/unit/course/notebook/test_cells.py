"""course.notebook.cells: one reading of nbgrader's solution and hidden-test markers."""

from course.notebook import cells
from course.notebook.cells import HIDDEN, HIDDEN_NOTE, MARKER, SOLUTION

TEST_CELL = """check(f(1), 2)
    ### BEGIN HIDDEN TESTS
    check(f(2), 4)   # the hidden one
    # a comment
    ### END HIDDEN TESTS
done()"""

ANSWER_CELL = """def f(x):
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION"""


def test_regions_name_each_line_by_the_markers_around_it():
    assert [region for _, region in cells.regions(TEST_CELL)] == [None, MARKER, HIDDEN, HIDDEN, MARKER, None]
    assert [region for _, region in cells.regions(ANSWER_CELL)] == [None, MARKER, SOLUTION, MARKER]


def test_a_region_ends_only_at_its_own_end_marker_as_nbgrader_reads_it():
    source = "### BEGIN HIDDEN TESTS\nsecret_one()\n### END SOLUTION\nsecret_two()\n### END HIDDEN TESTS\nshown()"
    assert [line for line, region in cells.regions(source) if region == HIDDEN] == [
        "secret_one()", "### END SOLUTION", "secret_two()"]         # another region's marker is a line of this one
    assert cells.without_hidden(source) == f"{HIDDEN_NOTE}\nshown()"


def test_what_is_secret_hidden_or_shown_follows_from_the_regions():
    assert list(cells.classify_lines(ANSWER_CELL)) == [("def f(x):", False), ("    return 2 * x", True)]
    assert cells.without_hidden(TEST_CELL) == f"check(f(1), 2)\n    {HIDDEN_NOTE}\ndone()"
    assert cells.hidden_lines(TEST_CELL) == ["check(f(2), 4)   # the hidden one"]      # comments and short lines not
    assert cells.without_markers(ANSWER_CELL) == "def f(x):\n    return 2 * x"
