"""How long a notebook takes a student, measured from its cells, against the time its header states.

The rule (issue 17): a notebook's core path is every cell before the markdown cell whose first
line is GOING_FURTHER; what follows it is optional and ungraded. Its measured minutes are

    (words in core markdown cells) / 200  +  0.5 x (core code cells that are neither solution
    nor test cells)  +  7 x (graded exercises: core solution cells with a grade_id)

and must not exceed MAX_MINUTES; the header's stated time must lie within TOLERANCE of them.
"""

import re
from dataclasses import dataclass

from course.notebook import cells

GOING_FURTHER = "## Going further (optional)"
WORDS_PER_MINUTE = 200
MINUTES_PER_CODE_CELL = 0.5
MINUTES_PER_EXERCISE = 7
MAX_MINUTES = 70
TOLERANCE = 15

# A word is a run of non-space characters with a letter or digit in it: table rules (`|`, `---`)
# and heading marks (`##`) are not read as words.
_WORD = re.compile(r"\S*[^\W_]\S*")
# The header's stated time: "Time: about 60 minutes", "Estimated time: ~60 min".
_HEADER_TIME = re.compile(r"time:\s*(?:about\s+|~\s*)?(\d+)\s*min", re.IGNORECASE)


@dataclass(frozen=True)
class Timing:
    words: int              # in the core's markdown cells
    code_cells: int         # core code cells a student runs and reads: neither solution nor test
    exercises: int          # graded exercises in the core
    header_minutes: int | None   # what the title cell states; None when it states no time

    @property
    def minutes(self) -> float:
        return (self.words / WORDS_PER_MINUTE + MINUTES_PER_CODE_CELL * self.code_cells
                + MINUTES_PER_EXERCISE * self.exercises)

    def __str__(self) -> str:
        header = "none" if self.header_minutes is None else f"{self.header_minutes} min"
        return (f"{self.words} words, {self.code_cells} code cells, {self.exercises} exercises: "
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


def timing(nb) -> Timing:
    core, _ = split(nb)
    return Timing(
        words=sum(len(_WORD.findall(c.source)) for c in core if c.cell_type == "markdown"),
        code_cells=sum(1 for c in core if c.cell_type == "code" and c.source.strip()
                       and not cells.is_solution(c) and not cells.is_test(c)),
        exercises=sum(1 for c in core if cells.is_solution(c) and cells.grade_id(c)),
        header_minutes=header_minutes(nb),
    )


def length_problems(nb) -> list[str]:
    """What breaks the length rule in `nb` (a source notebook); empty when it keeps it."""
    t = timing(nb)
    problems = []
    if t.minutes > MAX_MINUTES:
        problems.append(f"the core path takes {t.minutes:.1f} min by measure, over {MAX_MINUTES} "
                        f"(header says {t.header_minutes}); move parts into '{GOING_FURTHER}' or cut them")
    if t.header_minutes is None:
        problems.append(f"the title cell states no time ('Time: about N minutes'); measured {t.minutes:.1f} min")
    elif abs(t.header_minutes - t.minutes) > TOLERANCE:
        problems.append(f"the header says {t.header_minutes} min but the core path measures {t.minutes:.1f} min "
                        f"(more than {TOLERANCE} min apart)")
    _, further = split(nb)
    for cell in further:
        meta = cells.nbgrader_meta(cell)
        if meta.get("grade") or meta.get("solution"):
            problems.append(f"graded cell '{cells.grade_id(cell)}' is in '{GOING_FURTHER}', "
                            "which is optional and ungraded")
    return problems


# Issue 24's recalibration, measured and printed by `course check` but not yet enforced: dense
# technical prose read at 140 words a minute; a demonstration cell read and run by its length; an
# exercise by the size of its reference answer. The figures are estimates of a careful student's
# time, for the cuts still to come; the enforced rule above stays in force until the notebooks
# have been cut to fit this one.
CAREFUL_WORDS_PER_MINUTE = 140
CAREFUL_MINUTES_PER_DEMO = 0.5          # run it and read its output
CAREFUL_MINUTES_PER_CODE_LINE = 0.1     # read one non-blank line of a demonstration
CAREFUL_MINUTES_PER_EXERCISE = 3        # read the task, run the tests
CAREFUL_MINUTES_PER_ANSWER_LINE = 0.5   # write and debug one non-blank line of the reference answer


def _lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip())


def _answer(source: str) -> str:
    """The reference answer of a solution cell: its lines between the solution markers."""
    kept, inside = [], False
    for line in source.splitlines():
        if line.strip() == cells.SOLUTION_BEGIN:
            inside = True
        elif line.strip() == cells.SOLUTION_END:
            inside = False
        elif inside:
            kept.append(line)
    return "\n".join(kept)


def careful_minutes(nb) -> float:
    """The core path's time under issue 24's recalibrated model (see the constants above)."""
    core, _ = split(nb)
    words = sum(len(_WORD.findall(c.source)) for c in core if c.cell_type == "markdown")
    demos = [c for c in core if c.cell_type == "code" and c.source.strip()
             and not cells.is_solution(c) and not cells.is_test(c)]
    answers = [_answer(c.source) for c in core if cells.is_solution(c) and cells.grade_id(c)]
    return (words / CAREFUL_WORDS_PER_MINUTE
            + sum(CAREFUL_MINUTES_PER_DEMO + CAREFUL_MINUTES_PER_CODE_LINE * _lines(c.source) for c in demos)
            + sum(CAREFUL_MINUTES_PER_EXERCISE + CAREFUL_MINUTES_PER_ANSWER_LINE * _lines(a) for a in answers))
