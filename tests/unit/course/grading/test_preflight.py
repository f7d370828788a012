"""course.grading.preflight: each assignment defined in the gradebook before grading, and the most notebooks an
assignment has (the hard time limit's measure). nbgrader's generate_assignment itself is stood in for here
(`course grade` runs it for real in tests/e2e/test_grade_batch.py)."""

import nbgrader.apps
import pytest
from nbgrader.api import Gradebook

import course.notebook.nbgrader_runs as nbgrader_runs
from course.checkout import Course
from course.grading import nbgrader_settings, preflight
from course.grading.gradebooks import quick_schema_stamp
from course.notebook.nbgrader_runs import NbgraderError


def _template(path, assignment, notebooks):
    with quick_schema_stamp(), Gradebook(f"sqlite:///{path}") as gb:     # no alembic subprocess per gradebook
        gb.add_assignment(assignment)
        for name in notebooks:
            gb.add_notebook(name, assignment)
    return path


def test_max_notebooks_is_the_most_of_any_assignment_and_at_least_one(tmp_path):
    templates = {"a1": _template(tmp_path / "a1.db", "a1", ["one"]),
                 "a2": _template(tmp_path / "a2.db", "a2", ["one", "two", "three"]),
                 "a3": _template(tmp_path / "a3.db", "a3", [])}
    assert preflight.max_notebooks(templates) == 3
    assert preflight.max_notebooks({"a3": templates["a3"]}) == 1
    assert preflight.max_notebooks({}) == 1


class _API:
    """nbgrader's API as register uses it: what it was made with, and generate_assignment's answer."""

    made: list = []
    answer: dict = {"success": True}

    def __init__(self, coursedir, config):
        _API.made.append((coursedir, config))

    def generate_assignment(self, assignment, force, create):
        _API.made.append((assignment, force, create))
        return _API.answer


@pytest.fixture
def api(monkeypatch, tmp_path):
    scratched = []
    monkeypatch.setattr(nbgrader_runs, "scratch_course",
                        lambda course, assignments, scratch: scratched.append((course, assignments, scratch)))
    monkeypatch.setattr(nbgrader.apps, "NbGraderAPI", _API)
    monkeypatch.setattr(_API, "made", [])
    monkeypatch.setattr(_API, "answer", {"success": True})
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "nbgrader_config.py").write_text("c = get_config()\nc.Exchange.timezone = 'Zulu'\n")
    return scratched


def test_register_generates_the_assignment_into_the_class_gradebook_with_the_configs(api, tmp_path):
    course = Course(tmp_path / "course")
    run_config = nbgrader_settings.load([tmp_path / "config"])
    preflight.register(course, "a1", tmp_path / "scratch", "sqlite:///class.db", run_config)
    assert api == [(course, ["a1"], tmp_path / "scratch")]
    (coursedir, config), call = _API.made
    assert call == ("a1", True, True)
    assert coursedir.root == str(tmp_path / "scratch") and coursedir.db_url == "sqlite:///class.db"
    assert config.Exchange.timezone == "Zulu"       # the run's configuration
    assert "root" not in run_config.CourseDirectory     # a copy was pointed at the scratch folder, not the run's


def test_a_failed_generate_assignment_raises_with_nbgraders_account(api, tmp_path):
    _API.answer = {"success": False, "log": "[GenerateAssignment] checksum mismatch\n", "error": "Traceback ..."}
    with pytest.raises(NbgraderError, match="generate_assignment a1 failed:\n.*checksum mismatch\nTraceback"):
        preflight.register(Course(tmp_path), "a1", tmp_path / "scratch", "sqlite:///class.db",
                           nbgrader_settings.load([]))
