"""course.authoring.build: `course build`'s steps in order, with nbgrader and the reference run stood in for
(they are tested end to end by test_publish.py and test_reference.py, beside this file)."""

import json

import nbformat

import course.authoring.build as build_module
from course.checkout import Course
from course.notebook import cells


def _release_notebook(folder, assignment):
    test = nbformat.v4.new_code_cell(f"assert {assignment}_answer() == 1")
    test.metadata["nbgrader"] = cells.released_metadata(f"test_{assignment}_answer", True, 1)
    answer = nbformat.v4.new_code_cell("def f(): ...")
    answer.metadata["nbgrader"] = cells.released_metadata(f"{assignment}_answer", False, None)
    folder.mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(cells=[answer, test]), str(folder / f"{assignment}.ipynb"))


def test_build_replaces_the_release_writes_the_selfcheck_data_and_runs_the_reference(tmp_path, monkeypatch):
    course = Course(tmp_path / "course")
    (course.root / "helpers").mkdir(parents=True)
    stale = course.release_dir("a1") / "stale.txt"
    stale.parent.mkdir(parents=True)
    stale.write_text("from an earlier build")
    steps = []

    def scratch_course(given, assignments, folder):
        steps.append(("scratch", given, tuple(assignments)))
        return folder / "scratch"

    def generate_release(scratch, assignment):
        steps.append(("generate", assignment))
        generated = scratch / "release" / assignment
        _release_notebook(generated, assignment)
        (generated / "data.csv").write_text("1,2\n")
        return generated

    def build_reference(given, assignment):
        steps.append(("reference", assignment))
        assert course.release_notebook(assignment).is_file()        # the release is in place before it runs
        return {"a1": 1.5, "a2": 2.5}[assignment]

    monkeypatch.setattr(build_module, "scratch_course", scratch_course)
    monkeypatch.setattr(build_module, "generate_release", generate_release)
    monkeypatch.setattr(build_module, "build_reference", build_reference)
    said = []
    timings = build_module.build(course, ["a1", "a2"], say=lambda text, **_: said.append(text))

    assert timings == {"a1": 1.5, "a2": 2.5}
    assert steps == [("scratch", course, ("a1", "a2")), ("generate", "a1"), ("reference", "a1"),
                     ("generate", "a2"), ("reference", "a2")]
    assert not stale.exists()                                       # the old release folder is gone
    for assignment in ("a1", "a2"):
        assert (course.release_dir(assignment) / "data.csv").read_text() == "1,2\n"
        data = json.loads((course.root / "helpers" / "selfcheck_data" / f"{assignment}.json").read_text())
        assert data["exercises"] == {f"{assignment}_answer": [f"assert {assignment}_answer() == 1"]}
    assert said[0].startswith("[1/2] a1: generating") and said[-1].startswith("[2/2] a2: done in")
    assert "(notebook ran in 2.5 s)" in said[-1]
