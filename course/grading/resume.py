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
    """A fingerprint of a submitted folder: the contents of what is graded (its top-level notebooks and nbgrader's
    timestamp), and the name, kind, size and modification time of everything else, which is never read (a
    student's 4 GiB file would stall the run, and only the report's count of files left out depends on it).
    Names are hashed as the bytes they are on disk: a name that is not UTF-8 (a Windows zip unpacked here) is
    a name like any other."""
    h = hashlib.sha256()
    entries = []
    for here, dirs, files in os.walk(folder, followlinks=False):
        for name in dirs + files:
            entries.append(Path(here) / name)
    for path in sorted(entries, key=lambda p: os.fsencode(p)):
        rel = os.fsencode(path.relative_to(folder))
        try:
            info = path.lstat()
        except OSError:
            continue
        if path.is_symlink():
            h.update(b"link %s %s\n" % (rel, os.fsencode(os.readlink(path))))
        elif path.is_file() and path.parent == folder and (path.suffix == ".ipynb" or path.name == "timestamp.txt"):
            h.update(b"file %s %d\n" % (rel, info.st_size))
            try:
                with open(path, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        h.update(chunk)
            except OSError:     # a file the TA cannot read (mode 000): the student's, never a crash
                h.update(b"unreadable %d\n" % info.st_mtime_ns)
        else:
            h.update(b"entry %s %o %d %d\n" % (rel, info.st_mode, info.st_size, info.st_mtime_ns))
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
