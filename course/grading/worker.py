"""Grading one submission in a scratch course directory of its own.

A worker process (see `course.grading.pool`) calls `grade_submission` for one student and one
assignment at a time. The scratch directory holds a copy of the submission, the
assignment's non-notebook files and a gradebook with only the assignment's definitions,
so that workers never share a SQLite file and nothing a kernel does can reach the
class's real files. nbgrader's own Autograde and GenerateFeedback run in this process
(importing nbgrader once per worker, not once per submission), with `GuardedExecute`
in place of nbgrader's Execute and the course's feedback (`course.plugins.feedback.configure`).

The result is plain data (scores as nbgrader recorded them, the problems found, timings),
sent back to the parent, which alone writes the real gradebook.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import time
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path

from course.grading import gradebooks
from course.grading.execute import (
    EVENTS_FILE,
    JUDGE_FAILED,
    KERNEL_START,
    LEFT_RUNNING,
    SETUP_FAILED,
)
from course.grading.present import (
    TAMPERING,
    nbgrader_error,
    run_problems,
    submission_problems,
)
from course.grading.sandbox.policy import Sandbox

FEEDBACK_HELD_BACK = ("no feedback written while cells look like tampering; after a look, take the flag "
                      "off in formgrader, then its Generate Feedback (or `nbgrader generate_feedback`) writes it")


@dataclass(frozen=True)
class Job:
    """One submission to grade, and where everything it needs is."""

    assignment: str
    student: str
    submission: str          # class_dir/submitted/<student>/<assignment>
    source: str              # the course's source/<assignment>: its data files, and the order of its cells
    template_db: str         # a gradebook holding only the assignment's definitions
    config_dirs: tuple[str, ...]  # where nbgrader_config.py files are read from, lowest priority first
    scratch: str             # an empty folder for this job
    sandbox_json: str
    feedback: bool = True


def load_config(config_dirs):
    """nbgrader's configuration as `nbgrader` itself would load it from these folders."""
    from traitlets.config import Config
    from traitlets.config.loader import JSONFileConfigLoader, PyFileConfigLoader

    config = Config()
    for folder in config_dirs:
        for loader, ext in ((PyFileConfigLoader, ".py"), (JSONFileConfigLoader, ".json")):
            path = Path(folder) / f"nbgrader_config{ext}"
            if path.is_file():
                config.merge(loader(path.name, path=str(folder)).load_config())
    return config


def grade_submission(job: Job) -> dict:
    """Autograde one submission and write its feedback; never raises.

    A failure that is not the student's (see `course.grading.execute.InfrastructureFailure`, and
    any error of the grading code itself) gives no record at all: `result["infrastructure"]`
    says what happened, and the parent grades the submission again.
    """
    started = time.perf_counter()
    scratch = Path(job.scratch)
    run = None
    result = {"assignment": job.assignment, "student": job.student, "scratch": job.scratch,
              "graded": False, "problems": [], "autograded": None, "feedback": None, "infrastructure": None}
    try:
        left_out, invalid = _prepare(job, scratch)
        if left_out:
            result["problems"].append(("submission", f"{left_out} other {'file' if left_out == 1 else 'files'} "
                                                      "handed in left out: only the notebooks are graded"))
        result["problems"] += invalid
        submitted = scratch / "submitted" / job.student / job.assignment
        result["problems"] += submission_problems(submitted, job.template_db, job.assignment, Path(job.submission))
        _put_back_locked_cells(submitted, Path(job.source), job.template_db, job.assignment)
        api = _api(job, scratch)
        run = _autograde(api, job, scratch)
        if not run["success"] and not _events(scratch, INFRASTRUCTURE_KINDS):
            # nbgrader refuses a whole notebook over one bad cell (a duplicated grade id, edited
            # metadata): take the grading marks off such cells and let it grade the rest.
            repaired = _repair(submitted, job.template_db, job.assignment)
            if repaired:
                first = run
                run = _autograde(api, job, scratch)
                if run["success"]:
                    result["problems"].append(("nbgrader", f"refused the notebook as handed in ("
                                               f"{nbgrader_error(first)}); graded after taking the grading "
                                               f"marks off {', '.join(repaired)}"))
        failures = _events(scratch, INFRASTRUCTURE_KINDS)
        if failures:
            log = _kernel_log(scratch) if failures[0]["kind"] == KERNEL_START else ""
            said = f"; the kernel said: {_last_line(log)}" if log.strip() else ""
            result["infrastructure"] = {"kind": failures[0]["kind"],
                                        "detail": f"{failures[0]['notebook']}.ipynb: {failures[0]['detail']}{said}"}
            result["record"] = None
            result["log"] = _failure_log(run, scratch)
            result["seconds"] = round(time.perf_counter() - started, 2)
            return result
        for event in _events(scratch, (LEFT_RUNNING,)):
            many = f"{event['count']} processes were" if event["count"] > 1 else "1 process was"
            result["problems"].append((f"{event['notebook']}.ipynb", f"{many} still running when its kernel "
                                       "ended; all were stopped before the next submission"))
        result["seconds_autograde"] = round(time.perf_counter() - started, 2)
        db_url = _db_url(scratch)
        autograded = scratch / "autograded" / job.student / job.assignment
        notebooks = sorted(autograded.glob("*.ipynb")) if autograded.is_dir() else []
        if run["success"] and notebooks:
            result["record"] = gradebooks.autograde_result(db_url, job.assignment, job.student)
            result["graded"] = True
        else:
            result["record"] = gradebooks.zero_result(db_url, job.assignment)
            if autograded.exists():
                shutil.rmtree(autograded)
        explained = any(what.endswith("scored zero") for _, what in result["problems"])
        result["problems"] += run_problems(run, autograded if result["graded"] else None, explained)
        if result["graded"]:
            _strip_links(autograded)
            result["autograded"] = str(autograded)
            if job.feedback and any(TAMPERING in what for _, what in result["problems"]):
                # Output of such cells may carry the hidden tests in a disguise that the
                # feedback's redaction cannot recognise: a TA releases it after a look.
                result["problems"].append(("feedback", FEEDBACK_HELD_BACK))
            elif job.feedback:
                fb_started = time.perf_counter()
                fb = api.generate_feedback(job.assignment, job.student, force=True)
                feedback = scratch / "feedback" / job.student / job.assignment
                if fb["success"] and feedback.is_dir():
                    result["feedback"] = str(feedback)
                else:
                    result["problems"].append(("feedback", "no feedback written: "
                                               + _exception_line(fb.get("log") or "", fb.get("error") or "")))
                result["seconds_feedback"] = round(time.perf_counter() - fb_started, 2)
    except Exception as error:  # noqa: BLE001 - the grader's own failure: never the student's zero
        result.update(graded=False, record=None, autograded=None, feedback=None,
                      infrastructure={"kind": GRADER_ERROR, "detail": f"{type(error).__name__}: {error}"})
        result["log"] = traceback.format_exc()
    if run is not None and not run.get("success"):
        result["log"] = _failure_log(run, scratch) + result.get("log", "")
    result["seconds"] = round(time.perf_counter() - started, 2)
    return result


GRADER_ERROR = "grader-error"       # the grading code itself raised
INFRASTRUCTURE_KINDS = (KERNEL_START, SETUP_FAILED, JUDGE_FAILED)


def _autograde(api, job: Job, scratch: Path) -> dict:
    """nbgrader's autograde, with the events of this run only (course.grading.execute.EVENTS_FILE)."""
    events = scratch / "kernel" / EVENTS_FILE
    events.parent.mkdir(parents=True, exist_ok=True)
    events.unlink(missing_ok=True)
    return api.autograde(job.assignment, job.student, force=True, create=True)


def _events(scratch: Path, kinds) -> list[dict]:
    path = scratch / "kernel" / EVENTS_FILE
    lines = path.read_text().splitlines() if path.is_file() else []
    return [e for e in map(json.loads, lines) if e.get("kind") in kinds]


def _kernel_log(scratch: Path) -> str:
    """The end of what the kernels and bubblewrap said."""
    kernel_log = scratch / "kernel" / "kernel.log"
    return kernel_log.read_text(errors="replace")[-5000:] if kernel_log.is_file() else ""


def _failure_log(run: dict | None, scratch: Path) -> str:
    """nbgrader's account of a failed run and what the kernel and bubblewrap said, for the TA."""
    said = _kernel_log(scratch)
    run = run or {}
    return ((run.get("log") or "") + (run.get("error") or "") + (f"\n--- kernel.log ---\n{said}" if said else ""))[-50000:]


def _put_back_locked_cells(submitted: Path, source: Path, template_db: str, assignment: str) -> list[str]:
    """Put back the locked cells (tests, setup) a student deleted, as nbgrader grades the originals of
    locked cells a student edited: nbgrader then grades the test cells of a correct answer.
    Answer cells are not locked, so a deleted answer still scores zero. Returns the grade ids put back."""
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
            locked = {c.name: c for c in definition.source_cells if c.locked and c.name not in present}
            if not locked:
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
                restored = [gid for gid in restored if gid not in locked]
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

    meta = {"nbgrader": {"grade": points is not None, "grade_id": source_cell.name, "locked": True,
                         "schema_version": 3, "solution": False, "task": False, "checksum": source_cell.checksum}}
    if points is not None:
        meta["nbgrader"]["points"] = points
    make = nbformat.v4.new_code_cell if source_cell.cell_type == "code" else nbformat.v4.new_markdown_cell
    return make(source_cell.source, metadata=meta)


def _repair(submitted: Path, template_db: str, assignment: str) -> list[str]:
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


def _db_url(scratch: Path) -> str:
    return f"sqlite:///{scratch / 'gradebook.db'}"


def _prepare(job: Job, scratch: Path) -> tuple[int, list[tuple[str, str]]]:
    """Lay out the scratch course: the assignment's data files from source/ and, of the submission,
    only its notebooks (and nbgrader's timestamp). Nothing else a student hands in is needed, and any
    of it could break what runs before their code (a module a library imports, an unreadable file,
    tens of thousands of files). Returns how many other files were left out, and the problems of
    notebooks that are not valid (see `_sanitize`)."""
    if scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True)
    shutil.copy2(job.template_db, scratch / "gradebook.db")
    source = scratch / "source" / job.assignment
    source.mkdir(parents=True)
    src = Path(job.source)
    if src.is_dir():    # autograde copies these data files next to each notebook it grades
        shutil.copytree(src, source, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("*.ipynb", ".ipynb_checkpoints", "__pycache__"))
    submitted = scratch / "submitted" / job.student / job.assignment
    submitted.mkdir(parents=True)
    wanted = [f"{name}.ipynb" for name in notebook_names(job.template_db, job.assignment)] + [TIMESTAMP_FILE]
    copied, problems = 0, []
    for name in wanted:
        handed_in = Path(job.submission) / name
        try:
            if not stat.S_ISREG(handed_in.lstat().st_mode):
                continue        # a link or special file: left out
            shutil.copyfile(handed_in, submitted / name, follow_symlinks=False)
        except OSError:
            continue            # missing or unreadable: as if not handed in
        copied += 1
        if name.endswith(".ipynb"):
            problems += _sanitize(submitted / name)
    entries = 0
    for folder, dirs, files in os.walk(job.submission, followlinks=False):     # counted, never read
        entries += len(files) + sum(1 for d in dirs if os.path.islink(os.path.join(folder, d)))
    return max(0, entries - copied), problems


TIMESTAMP_FILE = "timestamp.txt"    # nbgrader's CourseDirectory.timestamp_file: the late penalty reads it


def notebook_names(template_db: str, assignment: str) -> list[str]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{template_db}") as gb:
        return [nb.name for nb in gb.find_assignment(assignment).notebooks]


def _sanitize(path: Path) -> list[tuple[str, str]]:
    """Make a handed-in notebook safe for the grader's own code; returns what the report says about it.

    A notebook that nbformat does not accept is replaced by one nbgrader cannot read either, so it is
    scored as any corrupted notebook is (zero). A cell whose nbgrader metadata has types nbgrader's own
    schema rejects loses that metadata: a graded cell then counts as deleted (a test cell is put back, an answer
    scores zero)."""
    import jsonschema
    import nbformat
    from nbgrader.nbgraderformat import MetadataValidator

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
        return [(where, f"not a valid notebook ({type(error).__name__}: {_first_line(str(error))}): scored zero")]
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
    return [(where, "grading marks that are not valid nbgrader metadata taken off " + ", ".join(dropped)
                    + "; such a cell is graded as if deleted")]


NOT_A_NOTEBOOK = "not a notebook: it failed nbformat's validation (see the report)\n"


def _first_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[0][:200] if lines else "no message"


def _strip_links(folder: Path) -> None:
    """Remove links and special files a kernel left behind: copying them would follow them."""
    for path in sorted(folder.rglob("*"), reverse=True):
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode) or not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            path.unlink()


def _api(job: Job, scratch: Path):
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import (
        AssignLatePenalties,
        CheckCellMetadata,
        IgnorePattern,
        LimitOutput,
        SaveAutoGrades,
    )

    from course.grading.execute import GuardedExecute
    from course.plugins import feedback

    config = load_config(job.config_dirs)
    config.CourseDirectory.root = str(scratch)
    config.CourseDirectory.db_url = _db_url(scratch)
    # nbgrader's own list with Execute swapped for GuardedExecute.
    config.Autograde.autograde_preprocessors = [GuardedExecute, IgnorePattern, ClearMetadataPreprocessor,
                                                LimitOutput, SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
    feedback.configure(config)
    sandbox = Sandbox.from_json(job.sandbox_json)
    config.GuardedExecute.sandbox_json = job.sandbox_json
    config.GuardedExecute.scratch_dir = str(scratch / "kernel")
    config.GuardedExecute.notebook_timeout = sandbox.limits.notebook_timeout
    config.GuardedExecute.output_per_cell = sandbox.limits.output_per_cell
    config.GuardedExecute.setup_cells = setup_cell_ids(job.template_db, job.assignment, Path(job.source))
    coursedir = CourseDirectory(config=config)
    return NbGraderAPI(coursedir=coursedir, config=config)


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


def setup_cells(template_db: str, assignment: str, source: Path, names: list[str]) -> list[str]:
    """The sources (as the gradebook holds them) of the instructor cells `names` that come before the
    first other code cell of each notebook: what runs before any student code does."""
    import nbformat
    from nbgrader.api import Gradebook

    found = []
    with Gradebook(f"sqlite:///{template_db}") as gb:
        for definition in gb.find_assignment(assignment).notebooks:
            texts = {c.name: c.source for c in definition.source_cells}
            try:
                nb = nbformat.read(str(source / f"{definition.name}.ipynb"), as_version=4)
            except Exception:  # noqa: BLE001 - no source notebook to order them by: nothing to try
                continue
            for cell in nb.cells:
                if cell.cell_type != "code":
                    continue
                if _grade_id(cell) not in names:
                    break
                found.append(texts[_grade_id(cell)])
    return found


_EXCEPTION = re.compile(r"^((?:[A-Za-z_]\w*\.)*[A-Z]\w*): (.*)$", re.MULTILINE)


def _exception_line(*texts: str) -> str:
    """'Type: first line of its message' of the last exception a traceback in `texts` ends with
    (nbgrader hands back its log and tracebacks as text; its own final error says only 'see the log')."""
    for text in texts:
        found = [m for m in _EXCEPTION.finditer(text) if not m.group(1).startswith("NbGraderException")]
        if found:
            return f"{found[-1].group(1)}: {found[-1].group(2)[:300]}"
    return _last_line("\n".join(texts))


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no message"
