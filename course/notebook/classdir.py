"""An nbgrader course directory, spelled once: a class folder a TA grades, or a scratch course the grader
and `course build` make for one job. nbgrader fixes most of these names; the last three are `course grade`'s."""

from __future__ import annotations

import hashlib
import re
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

    def done_marker(self, student: str, assignment: str) -> Path:
        """A submission's done-marker in `state` (its `.log` beside it). Named from a digest of the student id,
        with a readable part of it in front, never from the id itself: a folder name of 255 bytes leaves no room
        for a suffix, and one that is not UTF-8 has no name here that every file system takes."""
        digest = hashlib.sha256(student.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        readable = re.sub(r"[^A-Za-z0-9_.-]+", "_", student)[:40].lstrip(".")
        return self.state / assignment / f"{readable}-{digest}.json"

    def _under(self, folder: str, student: str, assignment: str) -> Path:
        path = self.root / folder
        return path / student / assignment if student else path
