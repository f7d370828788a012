"""Turning the recipes in this folder into submitted notebooks (see README.md)."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from course.notebook import cells
from course.fixtures import with_answers

BAD_DIR = Path(__file__).resolve().parent


@dataclass
class BadSubmission:
    name: str
    description: str
    expect: list[str] = field(default_factory=list)
    zero: str | set[str] = "none"
    sections: list[tuple[str, str, str]] = field(default_factory=list)   # (kind, argument, code)

    def zero_tests(self, test_ids: list[str]) -> set[str]:
        if self.zero == "all":
            return set(test_ids)
        if self.zero == "none":
            return set()
        return set(self.zero)


def load(path: Path) -> BadSubmission:
    bad = BadSubmission(name=path.stem, description="")
    current = None
    for line in path.read_text().splitlines():
        if current is None and line.startswith("# Bad:"):
            bad.description = line.removeprefix("# Bad:").strip()
        elif current is None and line.startswith("# Expect:"):
            bad.expect.append(line.removeprefix("# Expect:").strip())
        elif current is None and line.startswith("# Zero:"):
            value = line.removeprefix("# Zero:").strip()
            bad.zero = value if value in ("all", "none") else {v.strip() for v in value.split(",")}
        elif line.startswith("# %% "):
            kind, _, argument = line.removeprefix("# %% ").partition(" ")
            current = [kind, argument.strip(), []]
            bad.sections.append(current)
        elif current is not None:
            current[2].append(line)
    bad.sections = [(k, a, "\n".join(code).strip("\n")) for k, a, code in bad.sections]
    return bad


def all_bad() -> list[BadSubmission]:
    return [load(p) for p in sorted(BAD_DIR.glob("*.py")) if not p.name.startswith("_")]


def submit_bad(bad: BadSubmission, folder: Path, assignment: str, release, answers: dict[str, str],
               paths: dict[str, str]) -> Path:
    """Write `bad` as submitted/<bad.name>/<assignment>/ under `folder`; returns that folder."""
    target = folder / "submitted" / bad.name / assignment
    target.mkdir(parents=True, exist_ok=True)
    replaced = {arg: code for kind, arg, code in bad.sections if kind == "replace"}
    nb = with_answers(release, answers | replaced)
    setup = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    inserted = 0
    file_name = f"{assignment}.ipynb"
    for kind, arg, code in bad.sections:
        for key, value in paths.items():
            code = code.replace(f"${key}", value)
        if kind == "after":
            inserted += 1
            nb.cells.insert(setup + inserted, nbformat.v4.new_code_cell(code))
        elif kind == "file":            # a file handed in next to the notebook, at a relative path
            (target / arg).parent.mkdir(parents=True, exist_ok=True)
            (target / arg).write_text(code + "\n")
        elif kind == "recipe":
            op, _, rest = arg.partition(" ")
            if op == "delete":
                nb.cells = [c for c in nb.cells if cells.grade_id(c) != rest]
            elif op == "duplicate":
                i = _index(nb, rest)
                nb.cells.insert(i + 1, copy.deepcopy(nb.cells[i]))
            elif op == "retype":
                gid, kind_to = rest.split()
                i = _index(nb, gid)
                nb.cells[i] = nbformat.v4.new_markdown_cell(nb.cells[i].source, metadata=nb.cells[i].metadata)
            elif op == "edit":
                gid, _, source = rest.partition(" ")
                nb.cells[_index(nb, gid)].source = source
            elif op == "corrupt":
                (target / file_name).write_bytes(nbformat.writes(nb).encode()[:2000])
                return target
            elif op == "rename":
                file_name = rest
            elif op == "missing":
                (target / "README.txt").write_text("I could not get the notebook to save, sorry.\n")
                return target
            else:
                raise ValueError(f"{bad.name}: unknown recipe {op!r}")
    nbformat.write(nb, str(target / file_name))
    return target


def _index(nb, gid: str) -> int:
    found = [i for i, c in enumerate(nb.cells) if cells.grade_id(c) == gid]
    if not found:
        raise KeyError(gid)
    return found[0]


def report_lines(report: str, student: str) -> list[str]:
    return [line for line in report.splitlines() if line.startswith(f"{student} / ")]


def matches(pattern: str, lines: list[str]) -> bool:
    return any(re.search(pattern, line) for line in lines)
