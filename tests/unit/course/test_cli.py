"""The `course` command in process (course.cli.main), and what it says where the grading tools are missing."""

import subprocess
import sys

import pytest

from course import cli
from grading_support import ROOT


# A Python in which the modules named on its command line cannot be imported, as where `pip install .`
# installed the package without its `grading` extra; then `course ARGS...`.
WITHOUT = """
import importlib.abc, sys
missing = set(sys.argv[1].split(","))
class Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.partition(".")[0] in missing:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Missing())
from course.cli import main
sys.exit(main(sys.argv[2:]))
"""


def course_without(missing: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", WITHOUT, missing, "--root", str(ROOT), *args],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)


@pytest.mark.parametrize("missing", ["nbgrader,jupyter_client,nbformat",
                                     pytest.param("nbgrader", marks=pytest.mark.slow)])     # found later, in grade()
def test_course_grade_without_the_grading_extra_says_what_to_install(tmp_path, missing):
    result = course_without(missing, "grade", "--class-dir", str(tmp_path))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert "pytorch-course-section10[grading]" in result.stderr and "grading tools are not installed" in result.stderr


def test_only_a_missing_grading_module_is_taken_for_a_missing_extra(monkeypatch, capsys):
    def missing(name):
        def run(argv):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return run

    monkeypatch.setattr(cli, "_main", missing("nbgrader.api"))
    assert cli.main(["grade"]) == 2
    assert "no module nbgrader.api" in capsys.readouterr().err
    monkeypatch.setattr(cli, "_main", missing("numpy"))       # not the grading extra's: a real error
    with pytest.raises(ModuleNotFoundError):
        cli.main(["grade"])


@pytest.mark.slow      # imports nbgrader's gradebook and matplotlib
def test_course_report_on_a_folder_never_graded_says_so(tmp_path, capsys):
    assert cli.main(["--root", str(ROOT), "report", "--class-dir", str(tmp_path)]) == 1
    assert capsys.readouterr().err.startswith("course report: ")


@pytest.mark.parametrize("text, size", [("2G", 2 << 30), ("512M", 512 << 20), ("2GiB", 2 << 30), ("1000", 1000)])
def test_sizes_on_the_command_line(text, size):
    assert cli._size(text) == size
