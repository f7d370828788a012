"""The visible tests of a release notebook, as `helpers.selfcheck` reads them."""

import json
import re
from pathlib import Path

from course.checkout import Course
from course.notebook import cells


def visible_tests_json(release_notebook: Path) -> str:
    """JSON of {exercise: [visible test code, ...]} and {exercise: "Exercise N"} from a student release notebook."""
    nb = cells.read(release_notebook)
    names = cells.exercises(nb)
    exercises: dict[str, list[str]] = {name: [] for name in names}
    for cell in nb.cells:
        if cells.is_test(cell):
            exercises[cells.exercise_of(cells.grade_id(cell), names)].append(cell.source)
    return json.dumps({"generated_from": f"release/{release_notebook.parent.name}/{release_notebook.name}",
                       "exercises": exercises, "where": places(nb, names)}, indent=1) + "\n"


def places(nb, names) -> dict[str, str]:
    """{exercise: "Exercise 5"}: how the notebook's text names each exercise ("Exercise 5: `TinyMLP`")."""
    text = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")
    found = {}
    for name in names:
        match = re.search(rf"Exercise\s+(\d+):\s*`{re.escape(name)}`", text)
        if match:
            found[name] = f"Exercise {match.group(1)}"
    return found


def data_path(course: Course, assignment: str) -> Path:
    return course.root / "helpers" / "selfcheck_data" / f"{assignment}.json"
