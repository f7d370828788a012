"""Real nbgrader autograding of reference, untouched and wrong answers, once per assignment.

Wrong answers live in tests/wrong_answers/<assignment>/<exercise>__<mistake>.py: the whole
solution cell a student might hand in, first line a comment naming the mistake. They are
graded in a few submissions: submission k holds the k-th wrong answer of every exercise
(the reference answer where an exercise has fewer), so each wrong answer is graded for real
while the number of autograde runs stays small. For the loss of points to be the wrong
answer's own, a wrong answer is self-contained: it calls no other exercise's function.
"""

import copy
import functools
import html
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from course.notebook import cells
from course.plugins.feedback import hidden_lines
from course.notebook.nbgrader import (
    cell_scores,
    generate_release,
    run_nbgrader,
    scratch_course,
    submit,
)
from course.checkout import Course
from course.fixtures import reference_answers, tests_of, with_answers

ROOT = Path(__file__).resolve().parents[1]
COURSE = Course(ROOT)
WRONG_ANSWERS = ROOT / "tests" / "wrong_answers"
WRONG_NAME = re.compile(r"^(?P<exercise>[A-Za-z_][A-Za-z0-9_]*?)__(?P<mistake>[a-z0-9_]+)\.py$")


@dataclass(frozen=True)
class WrongAnswer:
    assignment: str
    exercise: str
    mistake: str
    path: Path

    @property
    def id(self) -> str:
        return f"{self.assignment}/{self.exercise}__{self.mistake}"

    @property
    def code(self) -> str:
        return self.path.read_text()


def wrong_answers(assignment: str) -> list[WrongAnswer]:
    folder = WRONG_ANSWERS / assignment
    found = []
    for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
        match = WRONG_NAME.match(path.name)
        if not match:
            raise ValueError(f"{path}: name it <exercise>__<mistake>.py")
        found.append(WrongAnswer(assignment, match["exercise"], match["mistake"], path))
    return found


def all_wrong_answers() -> list[WrongAnswer]:
    return [w for a in COURSE.assignments() for w in wrong_answers(a)]


@dataclass
class GradedAssignment:
    assignment: str
    scores: dict[str, dict[str, tuple[float, float]]]
    test_ids: dict[str, list[str]]                      # exercise -> its test cell grade ids
    wrong_student: dict[str, str] = field(default_factory=dict)   # wrong answer id -> student id
    autograded: Path | None = None
    manual: set[str] = field(default_factory=set)        # manually graded cells: autograde gives them 0

    def total(self, student: str, grade_ids=None) -> tuple[float, float]:
        """Score and maximum of `grade_ids`, or of every autograded cell (manually graded ones left out)."""
        per_cell = self.scores[student]
        chosen = ({g: v for g, v in per_cell.items() if g not in self.manual} if grade_ids is None
                  else {g: per_cell[g] for g in grade_ids})
        return sum(s for s, _ in chosen.values()), sum(m for _, m in chosen.values())

    def failures(self, student: str) -> str:
        """The error output of each test cell that lost points, for assertion messages."""
        nb = cells.read(self.autograded / student / self.assignment / f"{self.assignment}.ipynb")
        lines = []
        for cell in nb.cells:
            gid = cells.grade_id(cell)
            if gid in self.scores[student] and self.scores[student][gid][0] < self.scores[student][gid][1]:
                for out in cell.get("outputs", []):
                    text = out.get("evalue") or out.get("text") or ""
                    lines.append(f"{gid}: {out.get('ename', out.get('name', ''))} {text}".strip()[:400])
        return "\n".join(lines)


def lean(nb):
    """`nb` with only its nbgrader cells: what tests need, without the demonstrations."""
    slim = copy.deepcopy(nb)
    slim.cells = [c for c in slim.cells if cells.nbgrader_meta(c)]
    return slim


_KEEP = {}  # temp dirs must outlive the fixture: failure messages read the autograded notebooks


@functools.cache
def grade(assignment: str, wrong_per_exercise: int | None = None) -> GradedAssignment:
    """Autograde `assignment`'s reference, untouched and wrong answers (at most `wrong_per_exercise`
    of each exercise's, in file-name order, when given: `course compat` grades such a sample)."""
    tmp = tempfile.TemporaryDirectory(prefix=f"autograde-{assignment}-")
    _KEEP[assignment, wrong_per_exercise] = tmp
    course_dir = scratch_course(COURSE, [assignment], Path(tmp.name))
    release = cells.read(generate_release(course_dir, assignment) / f"{assignment}.ipynb")
    source = cells.read(COURSE.source_notebook(assignment))

    submit(course_dir, assignment, "reference", with_answers(release, reference_answers(source)))
    submit(course_dir, assignment, "untouched", release)
    # Wrong answers are graded in lean notebooks: only the nbgrader cells (setup, solutions,
    # tests, self-check), as if a student had deleted every demonstration. That is several
    # times faster, and "reference_lean" scoring full marks proves it loses nothing.
    lean_release = lean(release)
    submit(course_dir, assignment, "reference_lean", with_answers(lean_release, reference_answers(source)))
    by_exercise: dict[str, list[WrongAnswer]] = {}
    for wrong in wrong_answers(assignment):
        by_exercise.setdefault(wrong.exercise, []).append(wrong)
    wrong_student = {}
    rounds = max((len(v) for v in by_exercise.values()), default=0)
    for k in range(rounds if wrong_per_exercise is None else min(rounds, wrong_per_exercise)):
        student = f"wrong{k}"
        picked = {ex: answers[k] for ex, answers in by_exercise.items() if k < len(answers)}
        # Exercises without a k-th wrong answer get the reference answer, so that a notebook whose
        # later cells build on earlier exercises still runs.
        answers = reference_answers(source) | {ex: w.code for ex, w in picked.items()}
        submit(course_dir, assignment, student, with_answers(lean_release, answers))
        wrong_student.update({w.id: student for w in picked.values()})

    run_nbgrader(course_dir, "autograde", assignment, "--force")
    return GradedAssignment(
        assignment=assignment,
        scores=cell_scores(course_dir, assignment),
        test_ids={ex: tests_of(source, ex) for ex in cells.exercises(source)},
        wrong_student=wrong_student,
        autograded=course_dir / "autograded",
        manual={cells.grade_id(c) for c in source.cells
                if c.cell_type == "markdown" and cells.nbgrader_meta(c).get("grade")},
    )


def shown_lines(page: str) -> set[str]:
    """The lines of text an HTML page shows (tags taken out, entities read), stripped."""
    return {line.strip() for line in html.unescape(re.sub(r"<[^>]+>", "", page)).splitlines()}


def secret_lines(assignment: str) -> set[str]:
    """Lines of the assignment's hidden tests that appear nowhere else in the instructor's notebook."""
    source = cells.read(COURSE.source_notebook(assignment))
    public, secret = set(), set()
    for cell in source.cells:
        secret.update(line.strip() for line in hidden_lines(cell.source))
        for line, is_secret in cells.classify_lines(cell.source):
            if not is_secret:
                public.add(line.strip())
    return secret - public


def answer_kernel(folder: Path, notebook: str):
    """A stand-in for a student's kernel: a plain subprocess that runs `notebook` and serves its names with the
    course's answer server (course/answer_server.py) on a socket in `folder`, as the sandboxed kernel does.
    Returns (listening socket: accept() one connection per test, the subprocess)."""
    import socket
    import subprocess
    import sys

    from course.grading.verdicts.judge import PROTOCOL_SOURCE, SERVER_SOURCE

    path = folder / "answers.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    listener.settimeout(60)
    code = (f"{PROTOCOL_SOURCE}\n{SERVER_SOURCE}\nnamespace = {{}}\nexec({notebook!r}, namespace)\n"
            f"while True:\n    _course_serve({str(path)!r}, namespace)\n")
    return listener, subprocess.Popen([sys.executable, "-c", code])
