"""course.authoring.selfcheck_data: the visible tests of a release notebook, as helpers.selfcheck reads them."""

import json
from pathlib import Path

import nbformat
import pytest

from course.authoring.selfcheck_data import data_path, places, visible_tests_json
from course.checkout import Course
from course.notebook import cells
from grading_support import ROOT


def _code(source, name=None, locked=False, points=None):
    cell = nbformat.v4.new_code_cell(source)
    if name:
        cell.metadata["nbgrader"] = cells.released_metadata(name, locked, points)
    return cell


def _release(tmp_path) -> Path:
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("## Exercise 1: `add`\nWrite it.\n\n## Exercise 12: `train_one_epoch`"),
        _code("import torch", "setup", locked=True),
        _code("def add(a, b):\n    raise NotImplementedError", "add"),
        _code("assert add(1, 2) == 3", "test_add", locked=True, points=1),
        _code("def train_one_epoch():\n    pass", "train_one_epoch"),
        _code("def train():\n    pass", "train"),
        _code("assert add(0, 0) == 0", "test_add_zero", locked=True, points=1),
        _code("train_one_epoch()", "test_train_one_epoch_runs", locked=True, points=2),
        _code("print('not graded')"),
    ])
    path = tmp_path / "release" / "01_demo" / "01_demo.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(nb, str(path))
    return path


def test_visible_tests_are_grouped_by_exercise_in_notebook_order(tmp_path):
    data = json.loads(visible_tests_json(_release(tmp_path)))
    assert data["generated_from"] == "release/01_demo/01_demo.ipynb"
    assert data["exercises"] == {"add": ["assert add(1, 2) == 3", "assert add(0, 0) == 0"],
                                 "train_one_epoch": ["train_one_epoch()"],      # the longest name owns the test
                                 "train": []}
    assert list(data["exercises"]) == ["add", "train_one_epoch", "train"]


def test_places_name_each_exercise_as_the_text_does(tmp_path):
    data = json.loads(visible_tests_json(_release(tmp_path)))
    assert data["where"] == {"add": "Exercise 1", "train_one_epoch": "Exercise 12"}    # `train` is named nowhere


def test_a_place_needs_the_exercise_name_itself_not_a_prefix():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("Exercise 3: `train_one_epoch`")])
    assert places(nb, ["train", "train_one_epoch"]) == {"train_one_epoch": "Exercise 3"}


def test_the_data_goes_where_helpers_selfcheck_reads_it():
    course = Course(ROOT)
    assert data_path(course, "02_training_loop") == ROOT / "helpers" / "selfcheck_data" / "02_training_loop.json"


@pytest.mark.parametrize("assignment", Course(ROOT).assignments())
def test_the_committed_data_is_what_the_release_notebook_gives(assignment):
    course = Course(ROOT)
    assert data_path(course, assignment).read_text() == visible_tests_json(course.release_notebook(assignment))
