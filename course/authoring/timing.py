"""How long a notebook takes a student, measured from its cells, against the time its header states.

A notebook's core path is every cell before the markdown cell whose first line is GOING_FURTHER;
what follows it is optional and ungraded. The core path's minutes are the sum of three parts. The constants
are calibrated against a reviewer's per-exercise estimates (issue 39's fresh expert review, /tmp/review39.md
of 2026-12-03, section "Time" of each notebook): with them every notebook's figure lies within 10 minutes of
that review's total (01 80 vs 85, 02 96 vs 95, 03 91 vs 100, 04 73 vs 65-70, 05 82 vs 80-85, 06 76 vs 85,
before any part moved to Going further).

    reading     (words in core markdown cells) / 140
                Dense technical prose with code spans and formulas is read at 130 to 150 words a
                minute, about two thirds of the speed of plain prose (issue 24).
    demos       for each core code cell that is neither a solution nor a test cell:
                0.5 + 0.05 x (its non-blank lines)
                Half a minute to run it and read its output, three seconds a line to skim the code: the
                review puts reading and demonstrations together at 20 to 25 minutes a notebook, and six
                seconds a line (issue 24's figure) put them at 28 to 40.
    exercises   for each graded exercise (a core solution cell with a grade_id):
                2 + 0.75 x (code lines of the reference answer) + 3 x (its test cells)
                Two minutes to read the stub and plan; three quarters of a minute to write and debug each
                line a student has to write (the non-blank, non-comment lines between the solution markers);
                three minutes per test cell, each one graded aspect of the task: read what it checks, fail,
                fix, rerun. Its task text is markdown and counts under reading. Rounded from a least-squares fit
                to the review's 26 per-exercise figures (8 to 30 minutes each, 15 on average), which the old
                half minute per test cell and per line put at 5 to 10; the review's spread (a 9-line
                `to_device` 10 minutes, an 8-line `classify_error` 25 to 30) is not in line counts, so the
                fit is good to about 10 minutes a notebook, not a minute an exercise.

The core path must take at most MAX_MINUTES, and the time the title cell states ("Time: about N
minutes") must lie within TOLERANCE of the model's figure. `course check` enforces both through
`length_problems`.
"""

import re
from dataclasses import dataclass

from course.notebook import cells

GOING_FURTHER = "## Going further (optional)"
WORDS_PER_MINUTE = 140
MINUTES_PER_DEMO = 0.5              # run a demonstration and read its output
MINUTES_PER_DEMO_LINE = 0.05        # skim one non-blank line of its code (review of issue 39: was 0.1)
MINUTES_PER_EXERCISE = 2            # read the stub, plan the answer
MINUTES_PER_ANSWER_LINE = 0.75      # write and debug one code line of the reference answer (review: was 0.5)
MINUTES_PER_TEST_CELL = 3           # one graded aspect: read it, fail, fix, rerun (review: was 0.5)
MAX_MINUTES = 80                    # issue 39: a core path may take up to 80 minutes; the header says how long
TOLERANCE = 10
# Notebooks whose core path is over MAX_MINUTES, each held to the minutes it measured when it was listed: it may
# shrink, never grow, and its header must still state its real length. An entry goes when its notebook fits.
# (Issue 39: 03 fits at 80.0; 02 fits at 79.8, its scheduler demonstration and the syllabus aside in Going further.)
OVER_THE_HOUR: dict[str, float] = {}

# A word is a run of non-space characters with a letter or digit in it: table rules (`|`, `---`)
# and heading marks (`##`) are not read as words.
_WORD = re.compile(r"\S*[^\W_]\S*")
# The header's stated time: "Time: about 60 minutes", "Estimated time: ~60 min".
_HEADER_TIME = re.compile(r"time:\s*(?:about\s+|~\s*)?(\d+)\s*min", re.IGNORECASE)


@dataclass(frozen=True)
class Exercise:
    name: str
    answer_lines: int       # code lines of the reference answer (non-blank, not comments)
    test_cells: int

    @property
    def minutes(self) -> float:
        return (MINUTES_PER_EXERCISE + MINUTES_PER_ANSWER_LINE * self.answer_lines
                + MINUTES_PER_TEST_CELL * self.test_cells)


@dataclass(frozen=True)
class Timing:
    words: int                          # in the core's markdown cells
    demo_lines: tuple[int, ...]         # non-blank lines of each core code cell that is neither solution nor test
    exercises: tuple[Exercise, ...]     # the graded exercises of the core
    header_minutes: int | None          # what the title cell states; None when it states no time

    @property
    def reading_minutes(self) -> float:
        return self.words / WORDS_PER_MINUTE

    @property
    def demo_minutes(self) -> float:
        return sum(MINUTES_PER_DEMO + MINUTES_PER_DEMO_LINE * n for n in self.demo_lines)

    @property
    def exercise_minutes(self) -> float:
        return sum(e.minutes for e in self.exercises)

    @property
    def minutes(self) -> float:
        return self.reading_minutes + self.demo_minutes + self.exercise_minutes

    def __str__(self) -> str:
        header = "none" if self.header_minutes is None else f"{self.header_minutes} min"
        return (f"{self.words} words ({self.reading_minutes:.1f} min), {len(self.demo_lines)} demonstrations "
                f"({self.demo_minutes:.1f} min), {len(self.exercises)} exercises ({self.exercise_minutes:.1f} min): "
                f"measured {self.minutes:.1f} min, header {header}")


def is_going_further(cell) -> bool:
    lines = cell.source.strip().splitlines()
    return cell.cell_type == "markdown" and bool(lines) and lines[0].strip() == GOING_FURTHER


def split(nb) -> tuple[list, list]:
    """(core cells, Going further cells): the second part starts at the Going further heading."""
    start = next((i for i, c in enumerate(nb.cells) if is_going_further(c)), len(nb.cells))
    return nb.cells[:start], nb.cells[start:]


def header_minutes(nb) -> int | None:
    first = nb.cells[0].source if nb.cells else ""
    match = _HEADER_TIME.search(first)
    return int(match.group(1)) if match else None


def _lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip())


def _answer_lines(source: str) -> int:
    """Code lines of a solution cell's reference answer: between the solution markers, not blank, not a comment."""
    return sum(1 for line, region in cells.regions(source)
               if region == cells.SOLUTION and line.strip() and not line.strip().startswith("#"))


def timing(nb) -> Timing:
    core, _ = split(nb)
    solutions = [c for c in core if cells.is_solution(c) and cells.grade_id(c)]
    names = [cells.grade_id(c) for c in solutions]
    tests = [cells.exercise_of(cells.grade_id(c), names) for c in core if cells.is_test(c)]
    return Timing(
        words=sum(len(_WORD.findall(c.source)) for c in core if c.cell_type == "markdown"),
        demo_lines=tuple(_lines(c.source) for c in core if c.cell_type == "code" and c.source.strip()
                         and not cells.is_solution(c) and not cells.is_test(c)),
        exercises=tuple(Exercise(name, _answer_lines(c.source), tests.count(name))
                        for name, c in zip(names, solutions)),
        header_minutes=header_minutes(nb),
    )


def length_problems(nb, assignment: str = "") -> list[str]:
    """What breaks the length rule in `nb` (the source notebook of `assignment`); empty when it keeps it."""
    t = timing(nb)
    problems = []
    limit = OVER_THE_HOUR.get(assignment, MAX_MINUTES)
    if t.minutes > limit:
        problems.append(f"the core path takes {t.minutes:.1f} min by measure ({t}), over {limit}; "
                        f"move parts into '{GOING_FURTHER}' or cut them")
    elif assignment in OVER_THE_HOUR and t.minutes <= MAX_MINUTES:
        problems.append(f"the core path now fits the hour ({t.minutes:.1f} min): take {assignment} off OVER_THE_HOUR")
    if t.header_minutes is None:
        problems.append(f"the title cell states no time ('Time: about N minutes'); measured {t.minutes:.1f} min")
    elif abs(t.header_minutes - t.minutes) > TOLERANCE:
        problems.append(f"the header says {t.header_minutes} min but the core path measures {t.minutes:.1f} min "
                        f"(more than {TOLERANCE} min apart); state about {round(t.minutes)} minutes")
    _, further = split(nb)
    for cell in further:
        meta = cells.nbgrader_meta(cell)
        if meta.get("grade") or meta.get("solution"):
            problems.append(f"graded cell '{cells.grade_id(cell)}' is in '{GOING_FURTHER}', "
                            "which is optional and ungraded")
    return problems
