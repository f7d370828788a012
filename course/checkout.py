"""The course checkout: where things are in it, and its own settings ([tool.course] in pyproject.toml)."""

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import tomllib

# The `course` package's own folder: the judge's sandbox shows it read-only; a copied config finds its checkout by it.
PACKAGE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Course:
    """A course checkout: source/, release/, notebooks/ and nbgrader_config.py under `root`."""

    root: Path

    @classmethod
    def find(cls, start: Path | None = None) -> "Course":
        """The checkout containing `start` (default: the current directory)."""
        here = Path(start or Path.cwd()).resolve()
        for candidate in (here, *here.parents):
            if (candidate / "nbgrader_config.py").is_file() and (candidate / "source").is_dir():
                return cls(candidate)
        raise SystemExit(f"course: no course checkout (nbgrader_config.py and source/) at or above {here}")

    @property
    def config(self) -> Path:
        return self.root / "nbgrader_config.py"

    def assignments(self) -> list[str]:
        """Assignment names, in order: every folder of source/ holding a notebook of its own name."""
        return sorted(p.name for p in (self.root / "source").iterdir()
                      if (p / f"{p.name}.ipynb").is_file())

    def source_dir(self, assignment: str) -> Path:
        return self.root / "source" / assignment

    def source_notebook(self, assignment: str) -> Path:
        return self.source_dir(assignment) / f"{assignment}.ipynb"

    def release_dir(self, assignment: str) -> Path:
        return self.root / "release" / assignment

    def release_notebook(self, assignment: str) -> Path:
        return self.release_dir(assignment) / f"{assignment}.ipynb"

    def reference_notebook(self, assignment: str) -> Path:
        return self.root / "notebooks" / f"{assignment}.ipynb"

    def resolve(self, names: list[str] | None) -> list[str]:
        """`names`, checked against the assignments that exist (all of them when empty)."""
        known = self.assignments()
        if not names:
            return known
        unknown = [n for n in names if n not in known]
        if unknown:
            raise SystemExit(f"course: no such assignment: {', '.join(unknown)} (known: {', '.join(known)})")
        return list(names)


PLACEHOLDERS = ("@@COURSE_REPOSITORY@@", "@@COURSE_BRANCH@@")


@cache
def settings(root: Path) -> dict:
    with open(root / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["tool"]["course"]


def fill_placeholders(text: str, root: Path) -> str:
    """`text` with the repository address and branch filled in (Colab badges, the Colab install)."""
    conf = settings(root)
    return text.replace("@@COURSE_REPOSITORY@@", conf["repository"]).replace("@@COURSE_BRANCH@@", conf["branch"])
