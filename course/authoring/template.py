"""The notebook template of DESIGN.md, checked: every notebook keeps the same shape."""

import re

from course.authoring.timing import GOING_FURTHER, is_going_further
from course.notebook import cells

# Markdown headings every notebook has, in this order.
REQUIRED_HEADINGS = ("What is true here", "What you will be able to do", "Questions people ask",
                     "Self-check", "Summary")

# The syllabus's questions, by the notebook whose concept they belong to. Each must be answered
# in that notebook's "Questions people ask": recognised by all of its keywords (case-insensitive).
SYLLABUS_QUESTIONS = {
    "02_training_loop": [("no dropout or batch norm: still call model.eval()?", ("eval()", "dropout", "batch"))],
    "03_gpu_memory": [("do I need multiple GPUs for mixed precision?", ("mixed precision", "multiple gpus"))],
    "04_serialization": [("load a GPU-saved checkpoint on a CPU-only machine?", ("map_location", "cpu"))],
    "05_distributed": [("model parallelism or a GPU with more memory?", ("model parallelism", "bigger", "gpu"))],
}


def _headings(nb) -> list[str]:
    found = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            found += [m.group(1).strip() for m in re.finditer(r"^#{1,3}\s+(.*)$", cell.source, re.M)]
    return found


def _section(nb, heading: str) -> str:
    """The markdown and code text from `heading` to the next level-2 heading."""
    text, inside = [], False
    for cell in nb.cells:
        for line in cell.source.splitlines():
            match = re.match(r"^##\s+(.*)$", line) if cell.cell_type == "markdown" else None
            if match:
                inside = match.group(1).strip().startswith(heading)
            if inside:
                text.append(line)
    return "\n".join(text)


def template_problems(nb, assignment: str) -> list[str]:
    """What `nb` (a source notebook) lacks of the template; empty when it keeps it."""
    problems = []
    first = nb.cells[0].source if nb.cells else ""
    if not (nb.cells and nb.cells[0].cell_type == "markdown" and first.lstrip().startswith("# ")):
        problems.append("the first cell is not the title")
    for needed in ("Level:", "Time:", "colab.research.google.com/github/@@COURSE_REPOSITORY@@",
                   f"release/{assignment}/{assignment}.ipynb"):
        if needed not in first:
            problems.append(f"the title cell lacks {needed!r} (title, level, time, Open in Colab badge)")
    setup = next((c for c in nb.cells if c.cell_type == "code"), None)
    if setup is None or cells.grade_id(setup) != "setup" or not cells.nbgrader_meta(setup).get("locked"):
        problems.append("the first code cell is not the locked setup cell (grade_id 'setup')")
    elif "google.colab" not in setup.source:
        problems.append("the setup cell does not bootstrap Colab")
    headings = _headings(nb)
    positions = []
    for heading in REQUIRED_HEADINGS:
        where = [i for i, h in enumerate(headings) if h.startswith(heading)]
        if not where:
            problems.append(f"no '{heading}' heading")
        else:
            positions.append(where[0])
    if positions != sorted(positions):
        problems.append(f"the headings {REQUIRED_HEADINGS} are not in this order")
    problems += _going_further_problems(nb)
    remembers = sum(c.source.count("**Remember:**") for c in nb.cells if c.cell_type == "markdown")
    if remembers < 1:
        problems.append("no '**Remember:**' summary after a section")
    self_check = [c for c in nb.cells if cells.grade_id(c) == "self_check"]
    if not self_check or f'self_check("{assignment}", globals())' not in self_check[0].source:
        problems.append(f"no locked self-check cell (grade_id 'self_check') running self_check(\"{assignment}\", globals())")
    questions = _section(nb, "Questions people ask").lower()
    for summary, keywords in SYLLABUS_QUESTIONS.get(assignment, []):
        if not all(k.lower() in questions for k in keywords):
            problems.append(f"the syllabus question '{summary}' is not answered under 'Questions people ask'")
    return problems


def _going_further_problems(nb) -> list[str]:
    """The optional part, if any: one cell opening with GOING_FURTHER, after the Summary."""
    problems = []
    marked = [i for i, c in enumerate(nb.cells) if is_going_further(c)]
    if len(marked) > 1:
        problems.append(f"'{GOING_FURTHER}' opens {len(marked)} cells; the optional part has one heading")
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and not is_going_further(cell) and \
                re.search(r"^#{1,2}\s+going further", cell.source, re.I | re.M):
            problems.append(f"cell {i} has a 'Going further' heading that does not open the optional part: "
                            f"write it exactly '{GOING_FURTHER}', as the first line of its own markdown cell")
    if marked:
        summary = [i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"
                   and re.search(r"^##\s+Summary", c.source, re.M)]
        if not summary or summary[0] > marked[0]:
            problems.append(f"'{GOING_FURTHER}' comes before the Summary; it is the last part of the notebook")
    return problems
