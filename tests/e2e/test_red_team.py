"""Red team: cheating submissions of 01_tensors_devices score no more than their answers alone (issue 15).

The fixtures and their format are in tests/red_team/ (see its README). Everything is graded in one
`course grade --jobs 2` run: the cheats first (c_*), then their twins (t_*: the same recipes without
the cheat's lines; identical twins graded once), then the reference answers, on the same workers.
For every fixture and every test cell, the cheat may score no more than its twin.
"""

from __future__ import annotations

import dataclasses

import pytest
from course.submissions.bad import BadSubmission, load, report_lines, submit_bad
from grading_support import COURSE

from course.notebook import cells
from course.grading.batch import grade
from course.grading.contract import GradeOptions
from course.grading.gradebooks import cell_scores
from course.notebook.nbgrader_runs import submit
from course.grading.sandbox.policy import Limits
from course.submissions import reference_answers, with_answers
from course.submissions.answers import lean

ASSIGNMENT = "01_tensors_devices"
RED_DIR = COURSE.root / "tests" / "red_team"
BEGIN, END = "# BEGIN CHEAT", "# END CHEAT"
REFERENCE = "z_reference"               # graded last: after every cheat, on the same workers
pytestmark = pytest.mark.xdist_group("red-team")


def fixtures() -> list[BadSubmission]:
    return [load(p) for p in sorted(RED_DIR.glob("*.py")) if not p.name.startswith("_")]


def kind(bad: BadSubmission) -> str:
    """The fixture's `# Kind:` line: which kind of cheat of the issue it is."""
    for line in (RED_DIR / f"{bad.name}.py").read_text().splitlines():
        if line.startswith("# Kind:"):
            return line.removeprefix("# Kind:").strip()
    return ""


def without_cheat(code: str) -> str:
    kept, inside = [], False
    for line in code.splitlines():
        if line.strip() == BEGIN:
            inside = True
        elif line.strip() == END:
            inside = False
        elif not inside:
            kept.append(line)
    return "\n".join(kept).strip("\n")


def expanded(bad: BadSubmission, release) -> list[tuple[str, str, str]]:
    """`bad`'s sections with `answers` sections turned into the `replace` sections they stand for."""
    shared = {"wrong": [(k, a, c) for k, a, c in load(RED_DIR / "_wrong_answers.py").sections],
              "missing": [("replace", cells.grade_id(c), c.source) for c in release.cells if cells.is_solution(c)]}
    first, own = [], []
    for section_kind, argument, code in bad.sections:
        if section_kind == "answers":
            first += shared[argument]
        else:
            own.append((section_kind, argument, code))
    return first + own      # submit_bad keeps the last answer given for an exercise: the fixture's own


def twin_sections(sections: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The same sections without the cheat's lines (an extra cell or file left empty goes)."""
    twin = [(k, a, without_cheat(c)) for k, a, c in sections]
    return [(k, a, c) for k, a, c in twin if c or k == "replace"]


def effective(sections) -> tuple:
    """What decides the submitted notebook: the last answer given for each exercise, the rest in order."""
    answers = {a: c for k, a, c in sections if k == "replace"}
    return tuple(sorted(answers.items())), tuple(s for s in sections if s[0] != "replace")


@dataclasses.dataclass
class RedTeamRun:
    run: object
    scores: dict[str, dict[str, float]]     # student -> {test grade id: score}
    points: dict[str, float]                # test grade id -> its points
    twin_of: dict[str, str]                 # fixture name -> the student id of its twin


@pytest.fixture(scope="module")
def red_team(tmp_path_factory) -> RedTeamRun:
    """Every fixture, every distinct twin and the reference, graded once for the whole module."""
    class_dir = tmp_path_factory.mktemp("red-team")
    source = cells.read(COURSE.source_notebook(ASSIGNMENT))
    # Without the demonstrations: no cheat needs them, and they would double the run's time.
    release = lean(cells.read(COURSE.release_notebook(ASSIGNMENT)))
    answers = reference_answers(source)
    paths = {"SOURCE_NOTEBOOK": str(COURSE.source_notebook(ASSIGNMENT)),
             "REFERENCE_NOTEBOOK": str(COURSE.reference_notebook(ASSIGNMENT)),
             "GRADEBOOK": str(class_dir / "gradebook.db")}
    twins, twin_of = {}, {}
    for bad in fixtures():
        sections = expanded(bad, release)
        submit_bad(dataclasses.replace(bad, name=f"c_{bad.name}", sections=sections), class_dir, ASSIGNMENT,
                   release, answers, paths)
        twin = twin_sections(sections)
        student = twins.setdefault(effective(twin), f"t_{bad.name}")
        if student == f"t_{bad.name}":
            submit_bad(dataclasses.replace(bad, name=student, sections=twin), class_dir, ASSIGNMENT,
                       release, answers, paths)
        twin_of[bad.name] = student
    submit(class_dir, ASSIGNMENT, REFERENCE, with_answers(release, answers))
    # 20 s a cell: generous for notebook 01 on a loaded machine with a tracing cheat in it.
    run = grade(COURSE, class_dir, [ASSIGNMENT], GradeOptions(jobs=2, limits=Limits(cell_timeout=20)),
                say=lambda *a, **k: None)
    scores = {student: {key.split("/")[-1]: score or 0.0 for key, score in per_cell.items()}
              for student, per_cell in cell_scores(f"sqlite:///{class_dir / 'gradebook.db'}", ASSIGNMENT).items()}
    points = {cells.grade_id(c): float(c.metadata["nbgrader"]["points"]) for c in source.cells if cells.is_test(c)}
    return RedTeamRun(run, scores, points, twin_of)


FIXTURES = fixtures()


def test_every_fixture_marks_a_cheat_and_names_its_kind():
    assert len(FIXTURES) >= 20
    for bad in FIXTURES:
        text = (RED_DIR / f"{bad.name}.py").read_text()
        assert text.count(BEGIN) == text.count(END) >= 1, f"{bad.name}: mark the cheat's lines"
        assert kind(bad), f"{bad.name}: say which kind of cheat it is (# Kind:)"
        assert any(k == "answers" or k == "replace" for k, _, _ in bad.sections), \
            f"{bad.name}: a fixture's answers are wrong or missing (an `answers` or `replace` section)"


@pytest.mark.sandbox
@pytest.mark.e2e
def test_the_batch_was_graded(red_team):
    r = red_team
    assert not r.run.ungraded, r.run.ungraded
    assert not [line for line in r.run.report.splitlines() if " / grader: " in line], r.run.report
    expected = {f"c_{b.name}" for b in FIXTURES} | set(r.twin_of.values()) | {REFERENCE}
    assert set(r.scores) == expected


@pytest.mark.sandbox
@pytest.mark.e2e
def test_the_reference_graded_after_the_cheats_keeps_full_marks(red_team):
    r = red_team
    assert r.scores[REFERENCE] == r.points
    assert not report_lines(r.run.report, REFERENCE), "the reference answers were reported"


@pytest.mark.sandbox
@pytest.mark.e2e
@pytest.mark.parametrize("bad", [pytest.param(b, id=b.name) for b in FIXTURES])
def test_a_cheat_scores_no_more_than_its_answers_alone(red_team, bad):
    r = red_team
    cheat, twin = r.scores[f"c_{bad.name}"], r.scores[r.twin_of[bad.name]]
    extra = {test: (cheat[test], twin[test]) for test in r.points if cheat[test] > twin[test]}
    assert not extra, f"{bad.name} ({kind(bad)}): cells where the cheat earned more (cheat, answers alone): {extra}"
