"""An nbgrader course directory, spelled once: a class folder a TA grades, or a scratch course the grader
and `course build` make for one job. nbgrader fixes most of these names; the last three are `course grade`'s."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ClassDir:
    root: Path

    def submitted(self, student: str = "", assignment: str = "") -> Path:
        """submitted/, or a student's folder of one assignment in it."""
        return self._under("submitted", student, assignment)

    def autograded(self, student: str = "", assignment: str = "") -> Path:
        return self._under("autograded", student, assignment)

    def feedback(self, student: str = "", assignment: str = "") -> Path:
        return self._under("feedback", student, assignment)

    @property
    def gradebook(self) -> Path:
        return self.root / "gradebook.db"

    @property
    def db_url(self) -> str:
        return f"sqlite:///{self.gradebook}"

    @property
    def grades_csv(self) -> Path:
        return self.root / "grades.csv"

    @property
    def report(self) -> Path:
        return self.root / "grading_report.txt"

    @property
    def state(self) -> Path:
        """Where `course grade` keeps what it has graded (a done-marker per submission) for the next run."""
        return self.root / ".course-grade"

    def _under(self, folder: str, student: str, assignment: str) -> Path:
        path = self.root / folder
        return path / student / assignment if student else path
