"""course.grading.nbgrader_settings: where nbgrader's configuration is read from, what it gives, and copies of it
pointed at one course folder."""

import json

from course.checkout import Course
from course.grading import nbgrader_settings


def test_load_merges_the_folders_in_order_json_over_py(tmp_path):
    low, high = tmp_path / "low", tmp_path / "high"
    low.mkdir()
    high.mkdir()
    (low / "nbgrader_config.py").write_text("c = get_config()\nc.Execute.timeout = 10\nc.Exchange.timezone = 'A'\n")
    (low / "nbgrader_config.json").write_text(json.dumps({"Execute": {"timeout": 20}}))
    (high / "nbgrader_config.py").write_text("c = get_config()\nc.Exchange.timezone = 'B'\n")
    config = nbgrader_settings.load([str(low), str(high), str(tmp_path / "absent")])
    assert config.Execute.timeout == 20             # the folder's JSON over its .py
    assert config.Exchange.timezone == "B"          # a later folder over an earlier one


def test_load_of_no_folder_is_empty():
    assert dict(nbgrader_settings.load([])) == {}


def test_the_class_folders_own_file_comes_last_else_the_courses(tmp_path):
    course = Course(tmp_path / "course")
    assert nbgrader_settings.folders(course, tmp_path / "class")[-1] == course.root
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "nbgrader_config.py").write_text("c = get_config()\n")
    assert nbgrader_settings.folders(course, tmp_path / "class")[-1] == tmp_path / "class"


def test_a_pointed_copy_leaves_the_runs_configuration_as_it_was(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\nc.CourseDirectory.course_id = 'py'\n")
    config = nbgrader_settings.load([tmp_path])
    pointed = nbgrader_settings.pointed_at(config, tmp_path / "scratch", "sqlite:///x.db")
    assert (pointed.CourseDirectory.root, pointed.CourseDirectory.db_url) == (str(tmp_path / "scratch"),
                                                                               "sqlite:///x.db")
    assert pointed.CourseDirectory.course_id == "py" and "root" not in config.CourseDirectory
