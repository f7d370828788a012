"""Reading nbgrader's cell metadata and the solution / hidden-test markers."""

import nbformat

SOLUTION_BEGIN, SOLUTION_END = "### BEGIN SOLUTION", "### END SOLUTION"
HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
MARKERS = (SOLUTION_BEGIN, SOLUTION_END, HIDDEN_BEGIN, HIDDEN_END)
# What a line of a cell is, as `regions` reads the markers: inside a solution, inside hidden tests, or a marker.
SOLUTION, HIDDEN, MARKER = "solution", "hidden tests", "marker"
_OPENS = {SOLUTION_BEGIN: SOLUTION, HIDDEN_BEGIN: HIDDEN}
_CLOSES = {SOLUTION_END: SOLUTION, HIDDEN_END: HIDDEN}
HIDDEN_NOTE = "# (hidden tests: not shown)"     # what stands where hidden tests were cut out


def read(path) -> nbformat.NotebookNode:
    return nbformat.read(str(path), as_version=4)


def nbgrader_meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def grade_id(cell) -> str | None:
    return nbgrader_meta(cell).get("grade_id")


# The nbgrader metadata that decides how a cell is graded (nbgrader's checksum covers these and the source).
GRADING_KEYS = ("grade", "solution", "locked", "task", "points", "grade_id")


def locked_metadata(name: str, points: float | None, checksum: str | None = None) -> dict:
    """The nbgrader metadata a released locked cell carries (a test cell when it has points, else a setup cell)."""
    return released_metadata(name, True, points, checksum)


def released_metadata(name: str, locked: bool, points: float | None, checksum: str | None = None) -> dict:
    """The nbgrader metadata a released cell carries: a locked cell (a test cell when it has points, else a setup
    cell), or an answer cell (graded by hand when it has points)."""
    meta = {"grade": points is not None, "grade_id": name, "locked": locked, "schema_version": 3,
            "solution": not locked, "task": False}
    if points is not None:
        meta["points"] = points
    if checksum is not None:
        meta["checksum"] = checksum
    return meta


def is_solution(cell) -> bool:
    return bool(nbgrader_meta(cell).get("solution"))


def is_test(cell) -> bool:
    """A graded, non-solution code cell: the autograder's tests."""
    meta = nbgrader_meta(cell)
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


def regions(source: str):
    """Yield (line, region) for each line of `source`: SOLUTION or HIDDEN from a region's begin marker to its own
    end marker, None outside, MARKER for the marker lines that open or close one (inside a region, another
    marker is a line of it, as nbgrader reads them). The one reading of the markers; everything that asks which
    lines are secret, hidden or the answer builds on it."""
    inside = None
    for line in source.splitlines():
        stripped = line.strip()
        if inside is None and stripped in MARKERS:
            inside = _OPENS.get(stripped)          # a stray end marker opens nothing
            yield line, MARKER
        elif inside is not None and _CLOSES.get(stripped) == inside:
            inside = None
            yield line, MARKER
        else:
            yield line, inside


def classify_lines(source: str):
    """Yield (line, is_secret) for each non-marker line: secret lines are solution or hidden-test code."""
    return ((line, region is not None) for line, region in regions(source) if region != MARKER)


def without_markers(source: str) -> str:
    """`source` with the marker lines removed: the reference solution as a student would write it."""
    return "\n".join(line for line in source.splitlines() if line.strip() not in MARKERS)


def solution_code(cell) -> str:
    """The code a solution cell holds once its markers are gone (used for reference answers)."""
    return without_markers(cell.source)


def cells_by_grade_id(nb) -> dict[str, object]:
    return {grade_id(c): c for c in nb.cells if grade_id(c)}


def exercise_of(test_id: str, exercises) -> str | None:
    """Which exercise a test cell grades: test_<name> or test_<name>_<aspect>.

    The longest matching name wins, so `test_train_one_epoch` belongs to `train_one_epoch`
    even when an exercise called `train` exists too.
    """
    owners = [e for e in exercises if test_id == f"test_{e}" or test_id.startswith(f"test_{e}_")]
    return max(owners, key=len) if owners else None


def exercises(nb) -> list[str]:
    """The grade ids of the solution code cells, in notebook order."""
    return [grade_id(c) for c in nb.cells if is_solution(c) and c.cell_type == "code"]


def without_hidden(source: str) -> str:
    """`source` with each hidden-test region replaced by one HIDDEN_NOTE line."""
    out = []
    for line, region in regions(source):
        stripped = line.strip()
        if region == MARKER and stripped == HIDDEN_BEGIN:
            out.append(line[: len(line) - len(line.lstrip())] + HIDDEN_NOTE)
        elif region != HIDDEN and not (region == MARKER and stripped == HIDDEN_END):
            out.append(line)
    return "\n".join(out)


def hidden_lines(source: str) -> list[str]:
    """The lines of `source` between the hidden-test markers that could identify the test (stripped; not short,
    not a comment)."""
    return [line.strip() for line, region in regions(source)
            if region == HIDDEN and len(line.strip()) >= 8 and not line.strip().startswith("#")]
