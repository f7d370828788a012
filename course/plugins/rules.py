"""The course's rules inside nbgrader, so that nbgrader's own commands and formgrader's buttons
give what `course build` and `course grade` give.

nbgrader_config.py calls `configure`, which puts each piece in nbgrader's own seams:

- `FillPlaceholders` opens `GenerateAssignment.preprocessors` (`nbgrader generate_assignment`,
  formgrader's Generate): the Colab badge and install line get the repository and branch that
  `course build` writes (`course.checkout.fill_placeholders`, the one definition).
- `GenerateFeedback` gets the course's feedback (`course.plugins.feedback.configure`): hidden tests
  removed, flagged submissions held back.
- formgrader's Autograde button refuses, saying why and what to run instead (`UseCourseGrade`):
  nbgrader's autograde would run student code with the Jupyter server's rights, outside the
  sandbox, limits and guards of `course grade`. The command line `nbgrader autograde` is left
  as it is (the README says when it is fit to use).
"""

from __future__ import annotations

from pathlib import Path

from nbconvert.exporters import Exporter
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from course.checkout import PACKAGE, fill_placeholders

STUDENT_CONFIG = Path("release") / "nbgrader_config.py"

AUTOGRADE_REFUSED = (
    "Autograde is turned off in formgrader for this course. Student code must run in the sandbox of "
    "`course grade` (bubblewrap: no network; no gradebook, source/ or other submissions in sight; "
    "memory, process and time limits; the checks that the tests' tools were not replaced), and "
    "formgrader's Autograde would run it unsandboxed, with the Jupyter server's rights. "
    "In a terminal, run:  course grade --class-dir {root} {assignment}  "
    "(it grades new and changed submissions; --force regrades all), then reload this page.")


def checkout(config_file: str | Path) -> Path:
    """The course checkout whose nbgrader_config.py is `config_file`.

    A copy of that file in a scratch course folder (`course build`, the tests) has no checkout
    around it: it belongs to the checkout whose `course` package is running.
    """
    here = Path(config_file).resolve().parent
    if (here / STUDENT_CONFIG).is_file() and (here / "pyproject.toml").is_file():
        return here
    return PACKAGE.parent


def student_config(config_file: str | Path) -> Path:
    """release/nbgrader_config.py of that checkout: the settings a student's Validate uses too."""
    path = checkout(config_file) / STUDENT_CONFIG
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: the course's execution settings live there")
    return path


class FillPlaceholders(NbGraderPreprocessor):
    """Fill in the repository and branch placeholders of every cell, as `course build` does."""

    course_root = Unicode("", help="the course checkout whose pyproject.toml names the repository").tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        cell.source = fill_placeholders(cell.source, Path(self.course_root))
        return cell, resources


class UseCourseGrade(Exporter):
    """An exporter that refuses to run: formgrader's Autograde button gets it (see the module docstring)."""

    def __init__(self, parent=None, **kwargs):
        coursedir = getattr(parent, "coursedir", None)
        message = AUTOGRADE_REFUSED.format(root=getattr(coursedir, "root", "CLASS"),
                                           assignment=getattr(coursedir, "assignment_id", "ASSIGNMENT"))
        if parent is not None:
            parent.log.error(message)
        raise RuntimeError(message)


def configure(c, config_file: str | Path) -> None:
    """Put the course's plugins into the traitlets config `c` of nbgrader_config.py at `config_file`."""
    from nbgrader.converters import GenerateAssignment

    from course.plugins import feedback

    c.GenerateAssignment.preprocessors = [FillPlaceholders,
                                          *GenerateAssignment.class_traits()["preprocessors"].default()]
    c.FillPlaceholders.course_root = str(checkout(config_file))
    feedback.configure(c)
    # Nested: only the Autograde that formgrader's API makes (its parent chain), not the command line's.
    c.FormgradeExtension.NbGraderAPI.Autograde.exporter_class = UseCourseGrade
