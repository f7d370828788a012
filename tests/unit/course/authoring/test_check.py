"""`course build` / `course check`: the generated folders must follow source/, and never leak it."""

import copy
import shutil
import subprocess
import sys

import nbformat
import pytest

from course.notebook import cells
from course.authoring.check import grade_ids, leaks, source_outputs, stale_reference
from course.checkout import Course
from grading_support import ROOT

COURSE = Course(ROOT)
FIRST = "01_tensors_devices"


def run_course(*args, root=ROOT):
    return subprocess.run([sys.executable, "-m", "course.cli", "--root", str(root), *args],
                          capture_output=True, text=True)


def copy_course(tmp_path, assignment=FIRST) -> Course:
    """A throwaway checkout holding one assignment, as committed."""
    shutil.copy2(COURSE.config, tmp_path / "nbgrader_config.py")
    shutil.copy2(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(COURSE.source_dir(assignment), tmp_path / "source" / assignment)
    shutil.copytree(COURSE.release_dir(assignment), tmp_path / "release" / assignment)
    (tmp_path / "notebooks").mkdir()
    shutil.copy2(COURSE.reference_notebook(assignment), tmp_path / "notebooks")
    return Course(tmp_path)


def edit(path, change):
    nb = cells.read(path)
    change(nb)
    nbformat.write(nb, str(path))


@pytest.mark.e2e       # course check executes every reference notebook
@pytest.mark.xdist_group("course-check")
def test_course_check_passes_on_the_repository():
    result = run_course("check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "OK" in result.stdout


@pytest.mark.slow
@pytest.mark.xdist_group("course-check")
def test_course_check_fails_on_a_stale_copy_and_names_the_files(tmp_path):
    course = copy_course(tmp_path)

    def reword(nb):
        first_markdown = next(c for c in nb.cells if c.cell_type == "markdown")
        first_markdown.source += "\n\nA sentence added after the last build."

    edit(course.source_notebook(FIRST), reword)
    result = run_course("check", root=tmp_path)
    assert result.returncode == 1
    assert f"release/{FIRST}/{FIRST}.ipynb: stale" in result.stderr
    assert f"notebooks/{FIRST}.ipynb: stale" in result.stderr


def test_source_outputs_are_reported():
    nb = cells.read(COURSE.source_notebook(FIRST))
    assert source_outputs(nb, "x") == []
    code = next(c for c in nb.cells if c.cell_type == "code")
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="hi")]
    assert "carries outputs" in str(source_outputs(nb, "x")[0])


@pytest.mark.parametrize("mutation, expected", [
    ("duplicate", "grade_id 'test_broadcast_shape' is duplicated"),
    ("misnamed_solution", "defines ['broadcast_shape']"),
    ("misnamed_test", "expected test_<name>"),
    ("unlocked_test", "is not locked"),
    ("no_docstring", "does not start with a docstring"),
    ("no_hidden", "has no hidden tests"),
    ("untested", "exercise 'broadcast_shape' has no test cell"),
])
def test_grade_id_conventions(mutation, expected):
    nb = cells.read(COURSE.source_notebook(FIRST))
    assert grade_ids(nb, "x") == []
    by_id = cells.cells_by_grade_id(nb)
    test, solution = by_id["test_broadcast_shape"], by_id["broadcast_shape"]
    if mutation == "duplicate":
        nb.cells.append(copy.deepcopy(test))
    elif mutation == "misnamed_solution":
        solution.metadata.nbgrader.grade_id = "choose_device"
    elif mutation == "misnamed_test":
        test.metadata.nbgrader.grade_id = "check_device_choice"
    elif mutation == "unlocked_test":
        test.metadata.nbgrader.locked = False
    elif mutation == "no_docstring":
        test.source = test.source.split("\n", 1)[1]
    elif mutation == "no_hidden":
        test.source = cells.without_markers(test.source)
    elif mutation == "untested":
        nb.cells.remove(test)
    problems = [str(p) for p in grade_ids(nb, "x")]
    assert any(expected in p for p in problems), problems


def test_leaked_solution_and_hidden_tests_are_found(tmp_path):
    course = copy_course(tmp_path)
    source = cells.read(course.source_notebook(FIRST))
    assert leaks(course, FIRST, source) == []
    solution = cells.cells_by_grade_id(source)["to_device"]
    hidden = cells.cells_by_grade_id(source)["test_SineDataset_seed"]
    secret_solution = [line for line, secret in cells.classify_lines(solution.source) if secret][1]
    secret_test = [line for line, secret in cells.classify_lines(hidden.source) if secret][-1]

    def leak(nb):
        cells.cells_by_grade_id(nb)["to_device"].source += "\n" + secret_solution
        nb.cells.append(nbformat.v4.new_markdown_cell("A hint:\n\n" + secret_test))

    edit(course.release_notebook(FIRST), leak)
    problems = [str(p) for p in leaks(course, FIRST, source)]
    assert any("leaks a line of 'to_device'" in p for p in problems), problems
    assert any("leaks a line of 'test_SineDataset_seed'" in p for p in problems), problems


def test_unexecuted_reference_notebook_is_stale(tmp_path):
    course = copy_course(tmp_path)
    source = cells.read(course.source_notebook(FIRST))
    assert stale_reference(course, FIRST, source) == []

    def forget_outputs(nb):
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None

    edit(course.reference_notebook(FIRST), forget_outputs)
    assert "never executed" in str(stale_reference(course, FIRST, source)[0])


@pytest.mark.parametrize("mutation, expected", [
    ("no_summary", "no 'Summary' heading"),
    ("no_self_check", "no locked self-check cell"),
    ("no_setup", "is not the locked setup cell"),
    ("no_badge", "Open in Colab"),
    ("no_remember", "Remember"),
])
def test_template_problems_are_named(mutation, expected):
    from course.authoring.template import template_problems

    nb = cells.read(COURSE.source_notebook(FIRST))
    assert template_problems(nb, FIRST) == []
    if mutation == "no_summary":
        nb.cells = [c for c in nb.cells if not c.source.startswith("## Summary")]
    elif mutation == "no_self_check":
        nb.cells = [c for c in nb.cells if cells.grade_id(c) != "self_check"]
    elif mutation == "no_setup":
        nb.cells = [c for c in nb.cells if cells.grade_id(c) != "setup"]
    elif mutation == "no_badge":
        nb.cells[0].source = nb.cells[0].source.replace("colab.research.google.com", "example.org")
    elif mutation == "no_remember":
        for c in nb.cells:
            c.source = c.source.replace("**Remember:**", "Remember")
    assert any(expected in p for p in template_problems(nb, FIRST))


def test_syllabus_questions_are_required_where_they_belong():
    from course.authoring.template import template_problems

    nb = cells.read(COURSE.source_notebook(FIRST))  # says nothing of model parallelism
    assert any("syllabus question" in p for p in template_problems(nb, "05_distributed"))
