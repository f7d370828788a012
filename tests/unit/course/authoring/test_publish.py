"""`course publish`: the student tree holds what students need and nothing instructors keep."""

import shutil
import subprocess
import sys

import nbformat
import pytest

from course.notebook import cells
from course.authoring.check import secret_lines
from course.cli import main as course_main
from course.checkout import Course
from course.authoring.publish import leaks_in_tree, write_tree
from grading_support import ROOT

COURSE = Course(ROOT)


@pytest.mark.slow      # `course publish` as a command, checking the whole tree
def test_publish_writes_the_student_tree_and_nothing_secret(tmp_path):
    out = tmp_path / "student"
    result = subprocess.run([sys.executable, "-m", "course.cli", "--root", str(ROOT), "publish", str(out)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    for assignment in COURSE.assignments():
        assert (out / "release" / assignment / f"{assignment}.ipynb").is_file()
    assert (out / "helpers" / "checks.py").is_file() and (out / "README.md").is_file()
    requirements = (out / "requirements.txt").read_text()
    assert "torch==" in requirements and "nbgrader" not in requirements and "pytest" not in requirements
    assert not (out / "source").exists() and not (out / "notebooks").exists() and not (out / "course").exists()
    # Grep every published notebook and data file for every line only instructors see.
    secrets = secret_lines(*(cells.read(COURSE.source_notebook(a)) for a in COURSE.assignments()))
    assert secrets, "no secret lines found to look for"
    for path in out.rglob("*"):
        if path.suffix in (".ipynb", ".json", ".md", ".txt"):
            text = path.read_text().replace("\\n", "\n").replace('\\"', '"')
            lines = {line.strip().strip('",') for line in text.splitlines()}
            assert not lines & set(secrets), f"{path.relative_to(out)} holds {sorted(lines & set(secrets))[:3]}"
    assert leaks_in_tree(COURSE, out) == []


def test_publish_refuses_a_leaking_tree(tmp_path):
    tree = tmp_path / "tree"
    write_tree(COURSE, tree)
    assert leaks_in_tree(COURSE, tree) == []
    first = COURSE.assignments()[0]
    shutil.copy2(COURSE.reference_notebook(first), tree / "release" / "reference.ipynb")
    released = tree / "release" / first / f"{first}.ipynb"
    nb = cells.read(released)
    source = cells.read(COURSE.source_notebook(first))
    solution = next(c for c in source.cells if cells.is_solution(c) and c.cell_type == "code")
    nb.cells.append(nbformat.v4.new_code_cell(cells.solution_code(solution)))
    nbformat.write(nb, str(released))
    found = "\n".join(leaks_in_tree(COURSE, tree))
    assert "reference.ipynb: a copy of a source/ or notebooks/ notebook" in found
    assert f"a solution or hidden-test line of {cells.grade_id(solution)}" in found


def test_publish_refuses_a_non_empty_folder(tmp_path, capsys):
    (tmp_path / "keep.txt").write_text("mine")
    assert course_main(["--root", str(ROOT), "publish", str(tmp_path)]) == 1      # in process: the same command
    assert "not empty" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]
