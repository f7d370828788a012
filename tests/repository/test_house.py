"""The shape of the `course` package (issue 25): imports that never go in a circle, modules of a readable size; and
of tests/ (issue 40): every module imported by a test, the unit tests laid out as the package is."""

import ast
from pathlib import Path

import pytest

from grading_support import ROOT

COURSE = ROOT / "course"
TESTS = ROOT / "tests"
UNIT = TESTS / "unit"
# Where a test file may sit: unit/ mirrors course/ and helpers/; e2e/ runs whole classes, notebooks, browsers;
# repository/ checks the checkout as a whole.
TEST_FOLDERS = ("unit", "e2e", "repository")
MAX_LINES = 410
# Over the limit, and how far they may go until they are split (each a single concern today).
KNOWN_LONGER: dict[str, int] = {}


def _modules(package: Path = COURSE) -> dict[str, Path]:
    found = {}
    for path in package.rglob("*.py"):
        name = ".".join(path.relative_to(COURSE.parent).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


def _runtime_imports(path: Path, known: set[str]) -> set[str]:
    """The course modules `path` imports when it runs (imports under `if TYPE_CHECKING:` are annotations only)."""
    tree = ast.parse(path.read_text())
    skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
               and getattr(node.test, "id", None) == "TYPE_CHECKING" for n in ast.walk(node)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped or not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith("course"):
            continue
        for alias in node.names:
            sub = f"{node.module}.{alias.name}"
            found.add(sub if sub in known else node.module)
    return found


def test_no_import_cycle():
    modules = _modules()
    graph = {name: _runtime_imports(path, set(modules)) - {name} for name, path in modules.items()}
    state: dict[str, str] = {}

    def visit(name, trail):
        state[name] = "open"
        for dep in sorted(graph.get(name, ())):
            if state.get(dep) == "open":
                pytest.fail("import cycle: " + " -> ".join(trail[trail.index(dep):] + [dep]))
            if dep not in state:
                visit(dep, trail + [dep])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


def test_no_module_is_over_the_limit():
    over = {}
    for name, path in _modules().items():
        lines = len(path.read_text().splitlines())
        if lines > KNOWN_LONGER.get(name, MAX_LINES):
            over[name] = lines
    assert not over, f"split these modules: {over}"


def test_each_package_says_what_it_is_for():
    for name, path in _modules().items():
        if path.name == "__init__.py":
            assert ast.get_docstring(ast.parse(path.read_text())), f"{name} has no docstring"


def test_no_product_code_reads_the_tests_folder():
    """`course demo`, `course compat` and the benchmark load fixtures through course.submissions, never from tests/."""
    readers = []
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            imported = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if isinstance(node, ast.Constant) and node.value in ("tests", "tests/") \
                    or any(name.split(".")[0] == "grading_support" for name in imported):
                readers.append(f"{name}:{node.lineno}")
    assert not readers, readers


def test_no_two_modules_or_packages_share_a_name():
    """Issue 40: two `nbgrader.py` modules, and `kernel` both a package and a module, made a reader ask which."""
    seen: dict[str, list[str]] = {}
    for path in COURSE.rglob("*"):
        if "__pycache__" in path.parts or path.name == "__init__.py":
            continue
        if path.suffix == ".py" or (path.is_dir() and (path / "__init__.py").exists()):
            seen.setdefault(path.stem, []).append(str(path.relative_to(COURSE)))
    shared = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not shared, shared


def _has_code(path: Path) -> bool:
    """Anything in the module besides its docstring (a package's `__init__` often holds nothing else)."""
    return any(not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
               for node in ast.parse(path.read_text()).body)


def _imported_by(test_file: Path, known: set[str]) -> set[str]:
    """The course modules `test_file` imports by name: `import course.a.b`, `from course.a import b` (b a module)
    and `from course.a.b import name`."""
    found = set()
    for node in ast.walk(ast.parse(test_file.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found & known


def test_every_module_is_imported_by_a_test_file():
    """Issue 40: each course module with code has a test that imports it (a package `__init__` that is only a
    docstring needs none)."""
    modules = {name: path for name, path in _modules().items() if _has_code(path)}
    tested = set()
    for test_file in _test_files():
        tested |= _imported_by(test_file, set(modules))
    untested = sorted(set(modules) - tested)
    assert not untested, f"no test file imports these modules: {', '.join(untested)}"


def _test_files() -> list[Path]:
    return sorted(path for path in TESTS.rglob("test_*.py") if "__pycache__" not in path.parts)


def test_every_test_file_sits_in_a_tier_folder():
    """Issue 40: no test file loose in tests/ (only the shared support modules and conftest.py sit there)."""
    loose = [str(path.relative_to(TESTS)) for path in _test_files()
             if path.relative_to(TESTS).parts[0] not in TEST_FOLDERS]
    assert not loose, f"move these into {', '.join(TEST_FOLDERS)}: {loose}"


def test_unit_tests_mirror_the_package():
    """Issue 40: unit/<path>/test_<name>.py tests the module <path>/<name>.py (course/... or helpers/...), and imports
    it: a reader finds a module's tests by its name, and a test's subject by its place."""
    modules = {**_modules(COURSE), **_modules(ROOT / "helpers")}
    astray = []
    for test_file in _test_files():
        if not test_file.is_relative_to(UNIT):
            continue
        relative = test_file.relative_to(UNIT)
        module = ".".join([*relative.parent.parts, relative.stem.removeprefix("test_")])
        if module not in modules:
            astray.append(f"{relative}: no module {module}")
        elif module not in _imported_by(test_file, {module}):
            astray.append(f"{relative}: does not import {module}")
    assert not astray, "unit tests that do not mirror their module: " + "; ".join(astray)


def test_every_test_folder_is_a_package():
    """Two test files may share a name in different folders (kernel/test_loading.py, helpers/test_loading.py): pytest's
    default import mode tells them apart by their packages (and unit/ keeps tests/unit/course from hiding `course`)."""
    missing = sorted(str(folder.relative_to(TESTS)) for name in TEST_FOLDERS for folder in [TESTS / name,
                     *(TESTS / name).rglob("*")] if folder.is_dir() and folder.name != "__pycache__"
                     and not (folder / "__init__.py").exists())
    assert not missing, f"add an __init__.py to: {missing}"
