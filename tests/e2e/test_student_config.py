"""release/nbgrader_config.py: a student's Validate runs under the grader's settings.

JupyterLab's Validate button reads nbgrader_config.py from the folder the server started in:
release/ itself, the checkout (`jupyter lab release/`), or the root of the published tree.
"""

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course.authoring.check import orphans
from course.checkout import Course
from course.authoring.publish import write_tree
from grading_support import ROOT

COURSE = Course(ROOT)
STUDENT_CONFIG = ROOT / "release" / "nbgrader_config.py"

# What JupyterLab's Validate handler loads, printed from a server started in the current folder.
LOAD_AS_VALIDATE_DOES = (
    "import json\n"
    "from nbgrader.server_extensions.validate_assignment.handlers import ValidateAssignmentHandler\n"
    "c = ValidateAssignmentHandler.load_config(None)\n"
    "print(json.dumps([c.Execute.get('timeout'), c.IgnorePattern.get('pattern'), c.LimitOutput.get('max_lines'),\n"
    "                  bool(c.Validator.Execute.get('extra_arguments'))]))\n")


def validate_settings(cwd: Path) -> list:
    run = subprocess.run([sys.executable, "-c", LOAD_AS_VALIDATE_DOES], cwd=cwd, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.slow      # four Pythons that import nbgrader, and a published tree
def test_validate_reads_the_course_settings_from_release_the_checkout_and_the_published_tree(tmp_path):
    expected = [60, r"[A-Za-z]*Warning", 500, True]
    assert validate_settings(ROOT / "release") == expected
    assert validate_settings(ROOT) == expected
    published = tmp_path / "published"
    write_tree(COURSE, published)
    assert (published / "release" / "nbgrader_config.py").read_text() == STUDENT_CONFIG.read_text()
    assert validate_settings(published) == expected
    assert validate_settings(tmp_path) != expected     # nbgrader's defaults elsewhere: the check can fail


def test_the_student_settings_need_nothing_but_nbgrader():
    """A student's machine has nbgrader but not the course's grading code."""
    imported = [line.split()[1].split(".")[0] for line in STUDENT_CONFIG.read_text().splitlines()
                if line.lstrip().startswith(("import ", "from "))]
    assert "course" not in imported


def _warning_notebook(path: Path) -> None:
    """A notebook whose one graded test passes but prints a PyTorch-style warning on stderr."""
    test = nbformat.v4.new_code_cell(
        "import warnings\nwarnings.warn('TypedStorage is deprecated', UserWarning)\nassert 1 + 1 == 2",
        metadata={"nbgrader": {"grade": True, "grade_id": "test_sum", "locked": True, "points": 1,
                               "schema_version": 3, "solution": False, "task": False}})
    nb = nbformat.v4.new_notebook(cells=[test], metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nbformat.write(nb, str(path))


@pytest.mark.e2e       # nbgrader validate runs the notebook in a kernel
@pytest.mark.parametrize("where", ["release", "elsewhere"])
def test_nbgrader_validate_ignores_warnings_only_under_the_course_settings(tmp_path, where):
    notebook = tmp_path / "warns.ipynb"
    _warning_notebook(notebook)
    cwd = ROOT / "release" if where == "release" else tmp_path
    run = subprocess.run([sys.executable, "-m", "nbgrader", "validate", str(notebook)], cwd=cwd,
                         capture_output=True, text=True, timeout=300)
    said = run.stdout + run.stderr
    if where == "release":
        assert "Success! Your notebook passes all the tests." in said, said
    else:
        assert "Success!" not in said and "TypedStorage is deprecated" in said, said


def test_course_check_does_not_take_the_settings_file_for_a_stray_release():
    assert not [p for p in orphans(COURSE) if "nbgrader_config" in str(p)]


@pytest.mark.e2e       # nbgrader validate runs the release notebook in a kernel
@pytest.mark.slow
def test_validate_shows_each_failure_message_first_without_a_traceback(tmp_path):
    from course.submissions import with_answers

    release = nbformat.read(str(COURSE.release_notebook("01_tensors_devices")), as_version=4)
    wrong = "def broadcast_shape(shape_a, shape_b):\n    return (1,)"
    notebook = tmp_path / "01_tensors_devices.ipynb"
    nbformat.write(with_answers(release, {"broadcast_shape": wrong}), str(notebook))
    run = subprocess.run([sys.executable, "-m", "nbgrader", "validate", str(notebook)], cwd=ROOT / "release",
                         capture_output=True, text=True, timeout=300)
    errors = [part.split("\n\n")[0] for part in run.stdout.split("The error was:\n\n")[1:]]
    assert errors, run.stdout + run.stderr
    assert errors[0].lstrip().startswith("✗ broadcast_shape failed this test: broadcast_shape((3, 1), (1, 4))")
    assert all(e.lstrip().startswith("TODO ") for e in errors[1:]), errors
    assert "Traceback" not in run.stdout and "helpers/" not in run.stdout, run.stdout
