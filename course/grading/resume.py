"""A run killed half-way loses nothing that finished: a done-marker per submission, keyed by a fingerprint of
what was submitted, so that the next run grades only the rest (and what changed)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from course.checkout import Course
from course.grading.contract import GradeResult, Problem


def fingerprint(folder: Path) -> str:
    """A fingerprint of a submitted folder's files (names, links and contents)."""
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        if path.is_symlink():
            h.update(f"link {rel} {os.readlink(path)}\n".encode())
        elif path.is_file():
            h.update(f"file {rel} {path.stat().st_size}\n".encode())
            try:
                with open(path, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        h.update(chunk)
            except OSError:     # a file the TA cannot read (mode 000): the student's, never a crash
                h.update(f"unreadable {path.stat().st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def done_problems(marker: Path, digest: dict) -> list[Problem] | None:
    """The problems stored for a submission graded before with this `digest`; None when it must be graded
    (no marker, another digest or format, or one that cannot be read)."""
    try:
        saved = json.loads(marker.read_text())
        if not all(saved.get(k) == v for k, v in digest.items()):
            return None
        return [Problem.from_json(p) for p in saved["problems"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_done(marker: Path, digest: dict, result: GradeResult) -> None:
    """Note a recorded submission as done: its `digest` (what was graded, in which `RESULT_FORMAT`) and what
    a done-marker keeps of its result (`GradeResult.stored`)."""
    write_json(marker, digest | result.stored())


def write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)


def expected_seconds(state: Path, course: Course, assignment: str) -> float:
    seen = []
    for marker in (state / assignment).glob("*.json"):
        try:
            seen.append(float(json.loads(marker.read_text()).get("seconds") or 0))
        except (OSError, ValueError):
            pass
    if seen:
        return max(seen)
    return course.source_notebook(assignment).stat().st_size / 2000     # about 2 kB of notebook a second
