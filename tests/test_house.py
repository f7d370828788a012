"""The shape of the `course` package (issue 25): imports that never go in a circle, modules of a readable size."""

import ast
from pathlib import Path

import pytest

COURSE = Path(__file__).resolve().parents[1] / "course"
MAX_LINES = 410
# Over the limit, and how far they may go until they are split (each a single concern today).
KNOWN_LONGER: dict[str, int] = {}


def _modules() -> dict[str, Path]:
    found = {}
    for path in COURSE.rglob("*.py"):
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
    """`course demo`, `course compat` and the benchmark load fixtures through course.fixtures, never from tests/."""
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
    for test_file in sorted((Path(__file__).parent).glob("test_*.py")):
        tested |= _imported_by(test_file, set(modules))
    untested = sorted(set(modules) - tested)
    assert not untested, f"no test file imports these modules: {', '.join(untested)}"
