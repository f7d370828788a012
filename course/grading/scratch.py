"""The scratch course a submission is graded in: the submission copied in and made safe to read (links
dropped, files that are not notebooks named), the locked cells a student deleted put back, a damaged
notebook repaired from the template, and the instructor's setup cells found."""

from __future__ import annotations

import os
import shutil
import stat
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from course.grading.contract import SCRATCH_STUDENT, Problem
from course.notebook.cells import GRADING_KEYS, locked_metadata, released_metadata
from course.notebook.classdir import ClassDir

if TYPE_CHECKING:
    from course.grading.contract import Job



def put_back_locked_cells(submitted: Path, source: Path, template_db: str, assignment: str) -> list[str]:
    """Put back the locked cells (tests, setup) a student deleted, and the grading metadata of every released
    cell a student edited (a test cell marked `solution: true`, an answer cell marked `grade: true` with points,
    a lock taken off or put on), as nbgrader grades the originals of locked cells whose source a student edited:
    nbgrader then grades the cells of a correct answer, where it would refuse the whole notebook over the edited
    metadata. Answer cells are not locked, so a deleted answer still scores zero. Returns the grade ids put back
    or restored."""
    import nbformat
    from nbgrader.api import Gradebook

    restored = []
    with Gradebook(f"sqlite:///{template_db}") as gb:
        for definition in gb.find_assignment(assignment).notebooks:
            path = submitted / f"{definition.name}.ipynb"
            try:
                nb = nbformat.read(str(path), as_version=4)
            except Exception:  # noqa: BLE001 - missing or unreadable: nothing to put back into
                continue
            present = {_grade_id(c) for c in nb.cells} - {None}
            points = {c.name: c.max_score for c in definition.grade_cells}
            originals = {c.name: c for c in definition.source_cells}
            reset = _restore_metadata(nb, originals, points)
            restored += reset
            locked = {name: c for name, c in originals.items() if c.locked and name not in present}
            if not locked and not reset:
                continue
            order = _source_order(source / f"{definition.name}.ipynb") or sorted(locked)
            for i, gid in enumerate(order):
                if gid not in locked:
                    continue
                cell = _cell_for(locked[gid], points.get(gid))
                before = [g for g in order[:i] if g in present]
                after = [g for g in order[i + 1:] if g in present]
                ids = [_grade_id(c) for c in nb.cells]
                if before:
                    at = max(j for j, g in enumerate(ids) if g == before[-1]) + 1
                elif after:
                    at = min(j for j, g in enumerate(ids) if g == after[0])
                else:
                    at = len(nb.cells)
                nb.cells.insert(at, cell)
                present.add(gid)
                restored.append(gid)
            try:
                nbformat.write(nb, str(path))
            except Exception:  # noqa: BLE001 - a notebook nbformat cannot write back is graded as handed in
                restored = [gid for gid in restored if gid not in locked and gid not in reset]
    return restored


def _restore_metadata(nb, originals: dict, points: dict) -> list[str]:
    """Give every present released cell of its own type the grading metadata of its original (a locked cell its
    checksum too; an answer cell keeps its own, which nbgrader compares with the release to see an unanswered
    cell); returns their ids. A cell of another type is left alone: the report names it, and nbgrader grades it
    as it grades a retyped cell."""
    restored = []
    for i, cell in enumerate(nb.cells):
        original = originals.get(_grade_id(cell))
        if original is None or cell.cell_type != original.cell_type:
            continue
        meta = cell.metadata["nbgrader"]
        wanted = released_metadata(original.name, original.locked, points.get(original.name),
                                   original.checksum if original.locked else None)
        if any(meta.get(key) != wanted.get(key) for key in GRADING_KEYS):
            kept = {k: v for k, v in meta.items() if k not in GRADING_KEYS and not (k == "checksum" and original.locked)}
            cell.metadata["nbgrader"] = {**kept, **wanted}
            restored.append(original.name)
    return restored


def _grade_id(cell) -> str | None:
    meta = cell.get("metadata", {}).get("nbgrader")
    return meta.get("grade_id") if isinstance(meta, dict) else None


def _source_order(path: Path) -> list[str]:
    import nbformat

    try:
        return [g for g in map(_grade_id, nbformat.read(str(path), as_version=4).cells) if g]
    except Exception:  # noqa: BLE001 - no source notebook: the restored cells go at the end
        return []


def _cell_for(source_cell, points):
    """A cell nbgrader's OverwriteCells recognises as `source_cell` (it then restores source and metadata)."""
    import nbformat

    meta = {"nbgrader": locked_metadata(source_cell.name, points, source_cell.checksum)}
    make = nbformat.v4.new_code_cell if source_cell.cell_type == "code" else nbformat.v4.new_markdown_cell
    return make(source_cell.source, metadata=meta)


def repair(submitted: Path, template_db: str, assignment: str) -> list[str]:
    """Remove the nbgrader metadata nbgrader chokes on; returns what was changed ('cell 12 (test_x)')."""
    import nbformat
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{template_db}") as gb:
        definitions = {nb.name: {c.name for c in nb.source_cells} for nb in gb.find_assignment(assignment).notebooks}
    changed = []
    for name, known in definitions.items():
        path = submitted / f"{name}.ipynb"
        try:
            nb = nbformat.read(str(path), as_version=4)
        except Exception:  # noqa: BLE001 - unreadable notebooks stay zero
            continue
        last = {}
        for i, cell in enumerate(nb.cells):
            meta = cell.get("metadata", {}).get("nbgrader")
            if isinstance(meta, dict) and meta.get("grade_id"):
                last[meta["grade_id"]] = i
        for i, cell in enumerate(nb.cells):
            meta = cell.get("metadata", {}).get("nbgrader")
            if meta is None:
                continue
            gid = meta.get("grade_id") if isinstance(meta, dict) else None
            if not isinstance(meta, dict) or gid not in known or last.get(gid) != i \
                    or meta.get("schema_version") != 3:
                del cell.metadata["nbgrader"]
                changed.append(f"cell {i + 1}" + (f" ({gid})" if gid else ""))
        if changed:
            nbformat.write(nb, str(path))
    return changed


def gradebook_url(scratch: Path) -> str:
    return ClassDir(scratch).db_url


def prepare(job: Job, scratch: Path) -> tuple[int, list[Problem]]:
    """Lay out the scratch course: the assignment's data files from source/ and, of the submission,
    only its notebooks (and nbgrader's timestamp). Nothing else a student hands in is needed, and any
    of it could break what runs before their code (a module a library imports, an unreadable file,
    tens of thousands of files). Returns how many other files were left out, and the problems of
    notebooks that are not valid (see `sanitize`) and of a timestamp nbgrader cannot read."""
    from course.grading.diagnose import timestamp_left_out

    if scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True)
    shutil.copy2(job.template_db, ClassDir(scratch).gradebook)
    source = scratch / "source" / job.assignment
    source.mkdir(parents=True)
    src = Path(job.source)
    if src.is_dir():    # autograde copies these data files next to each notebook it grades
        shutil.copytree(src, source, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("*.ipynb", ".ipynb_checkpoints", "__pycache__"))
    submitted = ClassDir(scratch).submitted(SCRATCH_STUDENT, job.assignment)
    submitted.mkdir(parents=True)
    wanted = [f"{name}.ipynb" for name in notebook_names(job.template_db, job.assignment)] + [TIMESTAMP_FILE]
    copied, problems = 0, []
    for name in wanted:
        handed_in = Path(job.submission) / name
        try:
            info = handed_in.lstat()
            if not stat.S_ISREG(info.st_mode):
                continue        # a link or special file: left out
            if name == TIMESTAMP_FILE and info.st_size > TIMESTAMP_BYTES:
                continue        # padded: it would fill the kernel's capped working folder before the setup cells
            shutil.copyfile(handed_in, submitted / name, follow_symlinks=False)
        except OSError:
            continue            # missing or unreadable: as if not handed in
        copied += 1
        if name == TIMESTAMP_FILE and not _time_nbgrader_reads(submitted / name):
            (submitted / name).unlink()
            problems.append(timestamp_left_out())
        if name.endswith(".ipynb"):
            problems += sanitize(submitted / name)
    return max(0, handed_in_entries(Path(job.submission)) - copied), problems


def handed_in_entries(submission: Path) -> int:
    """How many files (and links to folders) a submission's folder holds, at any depth: counted, never read."""
    entries = 0
    for folder, dirs, files in os.walk(submission, followlinks=False):
        entries += len(files) + sum(1 for d in dirs if os.path.islink(os.path.join(folder, d)))
    return entries


TIMESTAMP_FILE = "timestamp.txt"    # nbgrader's CourseDirectory.timestamp_file: the late penalty reads it
TIMESTAMP_BYTES = 1024              # nbgrader writes one line of about 30 bytes; a bigger one is left out


def _time_nbgrader_reads(path: Path) -> bool:
    """Whether nbgrader's autograde reads `path` as a submission time: it reads the file as text and parses it,
    and a file it cannot read or parse ends its run for the submission (it calls a `fail` its CourseDirectory
    does not have), so the notebook would score zero for a file beside it."""
    from nbgrader.utils import parse_utc

    try:
        text = path.read_bytes().decode("utf-8").strip()
        return not text or parse_utc(text) is not None
    except Exception:  # noqa: BLE001 - whatever dateutil raises on a student's text: not a time
        return False


def notebook_names(template_db: str, assignment: str) -> list[str]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{template_db}") as gb:
        return [nb.name for nb in gb.find_assignment(assignment).notebooks]


def sanitize(path: Path) -> list[Problem]:
    """Make a handed-in notebook safe for the grader's own code; returns what the report says about it.

    A notebook that nbformat does not accept is replaced by one nbgrader cannot read either, so it is
    scored as any corrupted notebook is (zero). A cell whose nbgrader metadata has types nbgrader's own
    schema rejects loses that metadata: a graded cell then counts as deleted (a test cell is put back, an answer
    scores zero)."""
    import jsonschema
    import nbformat
    from nbgrader.nbgraderformat import MetadataValidator

    from course.grading.diagnose import invalid_marks_taken_off, not_a_valid_notebook

    where = path.name
    try:
        with warnings.catch_warnings():     # missing or repeated cell ids: nbformat mends them
            warnings.simplefilter("ignore")
            nb = nbformat.reads(path.read_text(), as_version=4)
            nbformat.validate(nb)
    except nbformat.reader.NotJSONError:
        return []   # not JSON at all: nbgrader cannot read it either, and the report says so once
    except Exception as error:  # noqa: BLE001 - whatever nbformat cannot read or validate is the student's file
        path.write_text(NOT_A_NOTEBOOK)
        return [not_a_valid_notebook(where, f"{type(error).__name__}: {_first_line(str(error))}")]
    schema = MetadataValidator().schema    # the types of nbgrader's cell metadata; its other rules (a
    dropped = []                            # test cell turned into markdown) nbgrader applies and reports
    for i, cell in enumerate(nb.cells):
        if "nbgrader" not in cell.metadata:
            continue
        meta = cell.metadata["nbgrader"]
        try:
            jsonschema.validate(meta, schema)
        except jsonschema.ValidationError:
            del cell.metadata["nbgrader"]
            gid = meta.get("grade_id") if isinstance(meta, dict) and isinstance(meta.get("grade_id"), str) else None
            dropped.append(f"cell {i + 1}" + (f" ({gid})" if gid else ""))
    if not dropped:
        return []
    nbformat.write(nb, str(path))
    return [invalid_marks_taken_off(where, dropped)]


NOT_A_NOTEBOOK = "not a notebook: it failed nbformat's validation (see the report)\n"


def _first_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[0][:200] if lines else "no message"


def strip_links(folder: Path) -> None:
    """Remove links and special files a kernel left behind: copying them would follow them."""
    for path in sorted(folder.rglob("*"), reverse=True):
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode) or not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            path.unlink()


def instructor_cells(template_db: str, assignment: str) -> list[str]:
    """The grade ids of the assignment's locked cells that are neither tests nor answers (the setup cells)."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{template_db}") as gb:
        return sorted(c.name for nb in gb.find_assignment(assignment).notebooks
                      for c in nb.source_cells if c.locked and c.cell_type == "code"
                      and c.name not in {g.name for g in nb.grade_cells} | {s.name for s in nb.solution_cells})


def setup_cell_ids(template_db: str, assignment: str, source: Path) -> dict[str, list[str]]:
    """For each notebook, the grade ids of its instructor cells that come before its first other code cell
    in the source: what runs before any student code does."""
    import nbformat

    names = set(instructor_cells(template_db, assignment))
    found = {}
    for name in notebook_names(template_db, assignment):
        found[name] = []
        try:
            nb = nbformat.read(str(source / f"{name}.ipynb"), as_version=4)
        except Exception:  # noqa: BLE001 - no source notebook to order them by: no setup cells
            continue
        for cell in nb.cells:
            if cell.cell_type != "code" or not cell.source.strip():
                continue
            if _grade_id(cell) not in names:
                break
            found[name].append(_grade_id(cell))
    return found

