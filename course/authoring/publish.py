"""`course publish DIR`: the tree students get, and a refusal if it would leak anything."""

import shutil
import tempfile
from pathlib import Path

import nbformat

from course.authoring.check import secret_lines
from course.checkout import Course
from course.notebook import cells

STUDENT_README = """# Section 10 · PyTorch — student notebooks

Six notebooks, one concept each. Open them in JupyterLab or on Google Colab.

## Locally

```bash
pip install -r requirements.txt
jupyter lab release/
```

Open a notebook and run its setup cell first. Everything runs on a CPU. Where nbgrader is
installed, its *Validate* button runs your notebook under the grader's settings
(`release/nbgrader_config.py`: time per cell, PyTorch warnings that do not count as errors).

## On Google Colab

Use the *Open in Colab* badge at the top of each notebook; its setup cell installs the course
package (Colab already has PyTorch).

## While you work

Fill in each cell that says `raise NotImplementedError()`. The test cell under it checks your
answer; the *Self-check* cell near the end runs all of them and prints a line per exercise.
Grading adds hidden tests, so also try the edge cases each exercise mentions.
"""

STUDENT_PYPROJECT = """[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "pytorch-course-section10"
version = "{version}"
requires-python = ">=3.10"
dependencies = ["torch>=2.4", "numpy", "matplotlib", "ipywidgets"]

[tool.setuptools]
packages = ["helpers"]

[tool.setuptools.package-data]
helpers = ["selfcheck_data/*.json", "checkpoint_files/*.pt"]
"""


# Beside release/: JupyterLab's Validate reads nbgrader_config.py from the folder the server
# starts in, and students start it here (`jupyter lab release/`). The settings stay in release/.
STUDENT_NBGRADER_CONFIG = """\"\"\"nbgrader settings for JupyterLab's Validate button: the course's, in release/nbgrader_config.py.\"\"\"
import os

c = get_config()  # noqa: F821 (provided by traitlets)
load_subconfig(os.path.join(os.path.dirname(os.path.abspath(__file__)), "release", "nbgrader_config.py"))  # noqa: F821
"""


class PublishRefused(RuntimeError):
    pass


def _student_requirements(course: Course) -> str:
    """The course's pins for what a student needs (no grading or test tools), plus the package."""
    keep = ("torch", "numpy", "matplotlib", "ipywidgets", "jupyterlab", "notebook", "ipykernel")
    lines = ["# Tested versions for students; installs the course package too."]
    for line in (course.root / "requirements.txt").read_text().splitlines():
        name = line.split("==")[0].strip().lower()
        if name in keep:
            lines.append(line.strip())
    lines.append("-e .")
    return "\n".join(lines) + "\n"


def write_tree(course: Course, dest: Path) -> None:
    shutil.copytree(course.root / "release", dest / "release",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    shutil.copytree(course.root / "helpers", dest / "helpers",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (dest / "requirements.txt").write_text(_student_requirements(course))
    (dest / "README.md").write_text(STUDENT_README)
    (dest / "nbgrader_config.py").write_text(STUDENT_NBGRADER_CONFIG)
    from helpers import __version__
    (dest / "pyproject.toml").write_text(STUDENT_PYPROJECT.format(version=__version__))


def leaks_in_tree(course: Course, tree: Path) -> list[str]:
    """Every way `tree` shows what only instructors may see."""
    secrets = secret_lines(*(cells.read(course.source_notebook(a)) for a in course.assignments()))
    instructor_files = {p.read_bytes() for folder in ("source", "notebooks")
                        for p in (course.root / folder).rglob("*.ipynb")}
    found = []
    for path in sorted(p for p in tree.rglob("*") if p.is_file()):
        rel = path.relative_to(tree)
        data = path.read_bytes()
        if data in instructor_files:
            found.append(f"{rel}: a copy of a source/ or notebooks/ notebook")
            continue
        if path.suffix == ".ipynb":
            nb = nbformat.reads(data.decode(), as_version=4)
            if any(c.get("outputs") for c in nb.cells if c.cell_type == "code"):
                found.append(f"{rel}: carries outputs (reference notebooks are instructor-only)")
            text = "\n".join(c.source for c in nb.cells)
        else:
            try:
                text = data.decode()
            except UnicodeDecodeError:
                continue  # binary data (a shipped checkpoint): holds no code
            if path.suffix == ".json":
                text = text.replace("\\n", "\n").replace('\\"', '"')
        # In notebooks and test data one secret line is a leak; in the package's own modules a
        # single line can be a shared idiom, so two secret lines in a row are needed.
        needed_run = 2 if path.suffix == ".py" else 1
        run = []
        for line in text.splitlines() + [""]:
            stripped = line.strip().strip('",')
            if stripped in cells.MARKERS:
                found.append(f"{rel}: the marker {stripped!r}")
            if stripped in secrets:
                run.append(stripped)
                continue
            if len(run) >= needed_run:
                found += [f"{rel}: a solution or hidden-test line of {secrets[s]}: {s!r}" for s in run]
            run = []
    return found


def publish(course: Course, dest: Path) -> list[Path]:
    """Write the student tree to `dest` (new or empty) or raise PublishRefused naming every leak."""
    if dest.exists() and any(dest.iterdir()):
        raise PublishRefused(f"{dest} exists and is not empty")
    with tempfile.TemporaryDirectory(prefix="course-publish-") as tmp:
        staging = Path(tmp) / "tree"
        write_tree(course, staging)
        found = leaks_in_tree(course, staging)
        if found:
            raise PublishRefused("refusing to publish:\n" + "\n".join(f"  {f}" for f in found))
        dest.mkdir(parents=True, exist_ok=True)
        for item in staging.iterdir():
            shutil.move(str(item), dest / item.name)
    return sorted(p.relative_to(dest) for p in dest.rglob("*") if p.is_file())
