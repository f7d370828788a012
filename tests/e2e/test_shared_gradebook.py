"""One gradebook, several runs: a PostgreSQL gradebook (`course grade --db URL`) that two runs on different
assignments record into at the same time, and the one-run-per-class-folder rule for the default SQLite one."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from nbgrader.api import Gradebook, InvalidEntry, MissingEntry
from nbgrader.apps import NbGraderAPI
from nbgrader.server_extensions.formgrader.formgrader import FormgradeExtension
from traitlets.config.loader import PyFileConfigLoader
from grading_support import COURSE, ROOT
from postgres_server import binaries, postgres_server

from course.submissions import reference_answers, with_answers
from course.submissions.answers import lean
from course.grading.batch import grade
from course.grading.contract import GradeOptions, GradingStopped
from course.grading.gradebooks import cell_scores, made, merge_autograde, scores
from course.grading.run_lock import one_run_at_a_time
from course.notebook import cells
from course.notebook.nbgrader_runs import submit

ASSIGNMENTS = ("04_serialization", "06_debugging")


def test_a_second_run_on_a_class_folder_refuses_and_names_the_first(tmp_path):
    with one_run_at_a_time(tmp_path):
        with pytest.raises(GradingStopped, match=rf"another `course grade` run .*pid {os.getpid()} on "):
            grade(COURSE, tmp_path, list(ASSIGNMENTS), GradeOptions(jobs=1), say=lambda *a, **k: None)
    assert not (tmp_path / "gradebook.db").exists(), "the refused run wrote nothing"
    with one_run_at_a_time(tmp_path):     # the first run's end lets it go
        pass


# nbgrader's own add_submission warns so under SQLAlchemy 2 (plain nbgrader's autograde does the same).
@pytest.mark.filterwarnings("ignore:Object of type <SubmittedAssignment> not in session")
def test_a_student_another_run_adds_at_the_same_moment_is_recorded(tmp_path, monkeypatch):
    """nbgrader looks for the student, another run adds it, nbgrader's insert meets that row: still recorded."""
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gb:
        gb.add_assignment("a1")
        gb.add_student("ada")          # the other run's insert
    looks = []
    real = Gradebook.find_student

    def missed_once(self, student_id):
        looks.append(student_id)
        if len(looks) == 1:
            raise MissingEntry()
        return real(self, student_id)

    monkeypatch.setattr(Gradebook, "find_student", missed_once)
    merge_autograde(url, "a1", "ada", {"timestamp": None, "notebooks": {}})
    monkeypatch.undo()
    with Gradebook(url) as gb:
        assert [s.id for s in gb.students] == ["ada"] and gb.find_submission("a1", "ada")


def test_a_new_shared_gradebook_another_run_is_making_is_found_made(tmp_path, monkeypatch):
    """Two runs open a new gradebook at once: the one whose course row (or table) the other made first is
    refused once, and looks again."""
    import nbgrader.api

    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    opened = []
    real = nbgrader.api.Gradebook.__init__

    def beaten_once(self, *args, **kwargs):
        opened.append(1)
        real(self, *args, **kwargs)
        if len(opened) == 1:
            self.close()
            raise InvalidEntry("UNIQUE constraint failed: course.id")

    monkeypatch.setattr(nbgrader.api.Gradebook, "__init__", beaten_once)
    made(url)
    assert len(opened) == 2


def _class(assignment: str) -> Path:
    """A class folder with two students' submissions of `assignment`: the reference answers and the release, lean
    (only the nbgrader cells: several times faster to grade, the same scores)."""
    class_dir = Path(tempfile.mkdtemp(prefix=f"shared-{assignment}-"))
    release = lean(cells.read(COURSE.release_notebook(assignment)))
    submit(class_dir, assignment, "ada", with_answers(release, reference_answers(cells.read(
        COURSE.source_notebook(assignment)))))
    submit(class_dir, assignment, "grace", release)
    return class_dir


@pytest.mark.sandbox
@pytest.mark.e2e
@pytest.mark.skipif(binaries() is None, reason="Debian's postgresql package is not installed (.ci/run installs it)")
def test_two_runs_into_one_postgresql_gradebook_at_once_lose_nothing():
    """Two `course grade` processes, each on its own class folder and assignment, the same two students, one
    PostgreSQL gradebook, started together: every grade of both is there, and formgrader shows them. One run is
    given the gradebook with --db, the other by its class folder's nbgrader_config.py, as formgrader reads it."""
    classes = {a: _class(a) for a in ASSIGNMENTS}
    with postgres_server() as database:
        url = database("cs101")
        by_config = classes[ASSIGNMENTS[1]]
        (by_config / "nbgrader_config.py").write_text((ROOT / "nbgrader_config.py").read_text() + (
            f"\nc.CourseDirectory.root = {str(by_config)!r}\nc.CourseDirectory.db_url = {url!r}\n"))
        env = os.environ | {"PYTHONPATH": str(ROOT)}
        given = {ASSIGNMENTS[0]: ["--db", url], ASSIGNMENTS[1]: []}
        runs = [subprocess.Popen([sys.executable, "-m", "course.cli", "grade", a, "--class-dir", str(classes[a]),
                                  *given[a], "--jobs", "1"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True) for a in ASSIGNMENTS]
        outputs = [run.communicate(timeout=900)[0] for run in runs]
        assert [run.returncode for run in runs] == [0, 0], "\n\n".join(outputs)
        shared = {a: cell_scores(url, a) for a in ASSIGNMENTS}
        totals = scores(url, list(ASSIGNMENTS))
        formgrader = NbGraderAPI(parent=FormgradeExtension(config=PyFileConfigLoader(
            "nbgrader_config.py", path=str(by_config)).load_config()))
        listed = {s["student"]: s for s in formgrader.get_submissions(ASSIGNMENTS[1])}
    assert "***" not in url and url.split("@")[0] in outputs[0], "the run names the gradebook it recorded into"
    assert {s: (v["autograded"], v["score"] == v["max_score"]) for s, v in listed.items()} == \
        {"ada": (True, True), "grace": (True, False)}, "formgrader shows the shared gradebook's grades"
    for a in ASSIGNMENTS:
        assert sorted(shared[a]) == ["ada", "grace"], f"{a}: both students recorded"
        assert not (classes[a] / "gradebook.db").exists(), "nothing went to the class folder's own gradebook"
        ada, most = totals[("ada", a)]
        assert ada == most > 0 and totals[("grace", a)][0] == 0, (a, totals)
        assert all(score is not None for score in shared[a]["ada"].values()), f"{a}: every cell of ada's scored"
    for folder in classes.values():
        shutil.rmtree(folder, ignore_errors=True)
