"""`course check`: find every way release/ and notebooks/ can disagree with source/, or leak it."""

import ast
import filecmp
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from course.authoring.reference import reference_from_source
from course.authoring.selfcheck_data import data_path, visible_tests_json
from course.authoring.template import template_problems
from course.authoring.timing import length_problems, timing
from course.checkout import Course
from course.notebook import cells
from course.notebook.nbgrader_runs import generate_release, scratch_course


@dataclass(frozen=True)
class Finding:
    """What `course check` found wrong with one of the maintainer's files (not a submission's Problem: contract)."""

    path: Path
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


def check(course: Course, assignments: list[str], say=print) -> list[Finding]:
    problems: list[Finding] = []
    problems += orphans(course)
    with tempfile.TemporaryDirectory(prefix="course-check-") as tmp:
        scratch = scratch_course(course, assignments, Path(tmp))
        for i, assignment in enumerate(assignments, 1):
            say(f"[{i}/{len(assignments)}] checking {assignment} ...", flush=True)
            source = cells.read(course.source_notebook(assignment))
            src_path = course.source_notebook(assignment).relative_to(course.root)
            problems += source_outputs(source, src_path)
            problems += grade_ids(source, src_path)
            problems += [Finding(src_path, f"template: {p}") for p in template_problems(source, assignment)]
            say(f"    {assignment}: {timing(source)}", flush=True)
            problems += [Finding(src_path, f"length: {p}") for p in length_problems(source, assignment)]
            problems += long_test_cells(source, src_path)
            generated = generate_release(scratch, assignment)
            problems += stale_release(course, assignment, generated)
            problems += stale_selfcheck(course, assignment, generated)
            problems += leaks(course, assignment, source)
            problems += stale_reference(course, assignment, source)
    return problems


def orphans(course: Course) -> list[Finding]:
    """Generated notebooks whose source no longer exists."""
    known = set(course.assignments())
    found = []
    for folder in sorted((course.root / "release").glob("*")):
        if folder.is_dir() and folder.name not in known:
            found.append(Finding(folder.relative_to(course.root), "release folder without a source/ notebook"))
    for nb in sorted((course.root / "notebooks").glob("*.ipynb")):
        if nb.stem not in known:
            found.append(Finding(nb.relative_to(course.root), "reference notebook without a source/ notebook"))
    return found


def source_outputs(nb, path) -> list[Finding]:
    return [Finding(path, f"cell {i} carries outputs or an execution count; source notebooks are stored stripped")
            for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and (c.get("outputs") or c.get("execution_count") is not None)]


def defined_names(source: str) -> list[str]:
    """Top-level functions and classes defined by a code cell."""
    try:
        tree = ast.parse(cells.without_markers(source))
    except SyntaxError:
        return []
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))]


def grade_ids(nb, path) -> list[Finding]:
    """Unique grade ids; solution cells named after what they define; tests named after a solution."""
    problems, seen = [], {}
    solutions = []
    for i, cell in enumerate(nb.cells):
        gid = cells.grade_id(cell)
        if cells.nbgrader_meta(cell) and not gid:
            problems.append(Finding(path, f"cell {i} has nbgrader metadata but no grade_id"))
            continue
        if not gid:
            continue
        if gid in seen:
            problems.append(Finding(path, f"grade_id '{gid}' is duplicated (cells {seen[gid]} and {i})"))
        seen[gid] = i
        if cells.is_solution(cell) and cell.cell_type == "code":
            names = defined_names(cell.source)
            if names != [gid]:
                problems.append(Finding(path, f"solution cell {i} has grade_id '{gid}' but defines {names or 'nothing'}; "
                                              "a solution cell defines exactly one function or class, named as its grade_id"))
            solutions.append(gid)
    for i, cell in enumerate(nb.cells):
        if not cells.is_test(cell):
            continue
        gid = cells.grade_id(cell)
        if cells.exercise_of(gid, solutions) is None:
            problems.append(Finding(path, f"test cell {i} has grade_id '{gid}'; expected test_<name> or "
                                          f"test_<name>_<aspect> for one of {solutions}"))
        if not cells.nbgrader_meta(cell).get("locked"):
            problems.append(Finding(path, f"test cell '{gid}' is not locked"))
        body = ast.parse(cells.without_markers(cell.source)).body if cell.source.strip() else []
        if not (body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant)
                and isinstance(body[0].value.value, str)):
            problems.append(Finding(path, f"test cell '{gid}' does not start with a docstring saying what it checks"))
        if cells.HIDDEN_BEGIN not in cell.source:
            problems.append(Finding(path, f"test cell '{gid}' has no hidden tests"))
    graded = {cells.exercise_of(cells.grade_id(c), solutions) for c in nb.cells if cells.is_test(c)}
    for s in solutions:
        if s not in graded:
            problems.append(Finding(path, f"exercise '{s}' has no test cell"))
    return problems


MAX_VISIBLE_TEST_LINES = 20


def long_test_cells(nb, path) -> list[Finding]:
    """Test cells whose visible part (what release/ shows a student) is over MAX_VISIBLE_TEST_LINES lines."""
    problems = []
    for cell in nb.cells:
        if cells.is_test(cell):
            visible = [line for line, secret in cells.classify_lines(cell.source) if not secret]
            if len(visible) > MAX_VISIBLE_TEST_LINES:
                problems.append(Finding(path, f"test cell '{cells.grade_id(cell)}' shows a student {len(visible)} "
                                              f"lines, over {MAX_VISIBLE_TEST_LINES}; move its machinery into helpers"))
    return problems


def _notebook_dict(path: Path) -> dict:
    return cells.read(path)


def _first_difference(a, b) -> str:
    if len(a.cells) != len(b.cells):
        return f"{len(a.cells)} cells, source/ generates {len(b.cells)}"
    for i, (x, y) in enumerate(zip(a.cells, b.cells)):
        if x != y:
            return f"cell {i} ({cells.grade_id(y) or y.cell_type}) differs from what source/ generates"
    return "notebook metadata differs from what source/ generates"


def stale_release(course: Course, assignment: str, generated: Path) -> list[Finding]:
    """release/<assignment>/ must be exactly what nbgrader generates from source/ now."""
    committed = course.release_dir(assignment)
    rel = committed.relative_to(course.root)
    if not committed.is_dir():
        return [Finding(rel, "missing; run `course build`")]
    problems = []
    want = {p.relative_to(generated) for p in generated.rglob("*") if p.is_file()}
    have = {p.relative_to(committed) for p in committed.rglob("*") if p.is_file()}
    for name in sorted(want - have):
        problems.append(Finding(rel / name, "missing from release/; run `course build`"))
    for name in sorted(have - want):
        problems.append(Finding(rel / name, "in release/ but not generated from source/ (stale or hand-added)"))
    for name in sorted(want & have):
        if name.suffix == ".ipynb":
            mine, theirs = _notebook_dict(committed / name), _notebook_dict(generated / name)
            if mine != theirs:
                problems.append(Finding(rel / name, "stale: " + _first_difference(mine, theirs) + "; run `course build`"))
        elif not filecmp.cmp(committed / name, generated / name, shallow=False):
            problems.append(Finding(rel / name, "stale: differs from source/; run `course build`"))
    return problems


def stale_selfcheck(course: Course, assignment: str, generated: Path) -> list[Finding]:
    """helpers/selfcheck_data/<assignment>.json must hold the visible tests of the release."""
    path = data_path(course, assignment)
    rel = path.relative_to(course.root)
    if not path.is_file():
        return [Finding(rel, "missing; run `course build`")]
    if path.read_text() != visible_tests_json(generated / f"{assignment}.ipynb"):
        return [Finding(rel, "stale: not the visible tests of the current release; run `course build`")]
    return []


def _meaningful(line: str) -> bool:
    """Lines specific enough that finding them elsewhere is evidence of a leak, not a coincidence."""
    text = line.strip()
    return len(text) >= 10 and not text.startswith(("#", "import ", "from ")) and text != "else:"


def secret_lines(*sources) -> dict[str, str]:
    """{line: grade id} of the solution and hidden-test lines that only the instructor sees.

    A line that one of the notebooks also shows outside any solution or hidden test is
    public, and a line too generic to be evidence of a leak (an import, `else:`) is ignored.
    """
    secret: dict[str, str] = {}
    public: set[str] = set()
    for source in sources:
        for cell in source.cells:
            for line, is_secret in cells.classify_lines(cell.source):
                if not is_secret:
                    public.add(line.strip())
                elif _meaningful(line):
                    secret.setdefault(line.strip(), cells.grade_id(cell) or "?")
    return {line: gid for line, gid in secret.items() if line not in public}


def leaks(course: Course, assignment: str, source) -> list[Finding]:
    """Solution code, hidden tests or their markers in any release notebook or the self-check data."""
    secret = secret_lines(source)
    def scan(rel, where, text):
        for line in text.splitlines():
            line = line.strip()
            if line in cells.MARKERS:
                yield Finding(rel, f"{where} still has the marker '{line}'")
            elif line in secret:
                yield Finding(rel, f"{where} leaks a line of '{secret[line]}' that only the instructor "
                                   f"should see: {line!r}")

    problems = []
    for nb_path in sorted(course.release_dir(assignment).rglob("*.ipynb")):
        rel = nb_path.relative_to(course.root)
        for i, cell in enumerate(cells.read(nb_path).cells):
            problems += scan(rel, f"cell {i}", cell.source)
            if cell.get("outputs"):
                problems.append(Finding(rel, f"cell {i} carries outputs; release notebooks are stored stripped"))
    selfcheck = data_path(course, assignment)
    if selfcheck.is_file():
        for exercise, tests in json.loads(selfcheck.read_text())["exercises"].items():
            for code in tests:
                problems += scan(selfcheck.relative_to(course.root), f"the visible tests of {exercise}", code)
    return problems


def stale_reference(course: Course, assignment: str, source) -> list[Finding]:
    """notebooks/<assignment>.ipynb must hold the source's current cells, all executed."""
    path = course.reference_notebook(assignment)
    rel = path.relative_to(course.root)
    if not path.is_file():
        return [Finding(rel, "missing; run `course build`")]
    reference = cells.read(path)
    expected = reference_from_source(source, course.root)
    if len(reference.cells) != len(expected.cells):
        return [Finding(rel, f"stale: {len(reference.cells)} cells, source/ has {len(expected.cells)}; run `course build`")]
    problems = []
    for i, (have, want) in enumerate(zip(reference.cells, expected.cells)):
        if have.cell_type != want.cell_type or have.source != want.source or \
                have.metadata.get("nbgrader") != want.metadata.get("nbgrader"):
            problems.append(Finding(rel, f"stale: cell {i} differs from source/; run `course build`"))
            break
        if have.cell_type == "code" and have.source.strip() and have.get("execution_count") is None:
            problems.append(Finding(rel, f"cell {i} was never executed; run `course build`"))
            break
    return problems
