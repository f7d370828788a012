"""Reference notebooks: the source with its solutions, executed on a CPU, outputs stored."""

import copy
import os
import shutil
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from course.checkout import Course, fill_placeholders
from course.notebook import cells

# Generous: a reference notebook that needs this long is itself a bug (see `course build`'s timing).
CELL_TIMEOUT_S = 300


def reference_from_source(source_nb: nbformat.NotebookNode, root: Path) -> nbformat.NotebookNode:
    """The source notebook with markers removed, placeholders filled in and outputs cleared."""
    nb = copy.deepcopy(source_nb)
    for cell in nb.cells:
        cell.source = fill_placeholders(cells.without_markers(cell.source), root)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


def merge_split_streams(nb: nbformat.NotebookNode) -> None:
    """Join each run of consecutive stream outputs with the same name into one, in place.

    The kernel sends what a cell prints in pieces, on a timer: `print(text)` is two writes (`text`, then
    "\n"), and a flush between them stores a stray "\n" output (issue 24, 03's cell 66). Jupyter shows
    such a run as one output anyway; joined, the stored notebook reads the same from build to build."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        merged = []
        for output in cell.outputs:
            last = merged[-1] if merged else None
            if (output.output_type == "stream" and last is not None and last.output_type == "stream"
                    and last.name == output.name):
                last.text += output.text
            else:
                merged.append(output)
        cell.outputs = merged


def execute_on_cpu(nb: nbformat.NotebookNode, data_dir: Path) -> float:
    """Execute `nb` in place on the CPU, working in a scratch copy of `data_dir`; returns seconds."""
    saved = os.environ.get("CUDA_VISIBLE_DEVICES")
    os.environ["CUDA_VISIBLE_DEVICES"] = ""  # the kernel inherits it: reference outputs are CPU outputs
    try:
        with tempfile.TemporaryDirectory(prefix="course-run-") as tmp:
            workdir = Path(tmp) / data_dir.name
            shutil.copytree(data_dir, workdir)
            start = time.perf_counter()
            NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3", record_timing=False,
                           resources={"metadata": {"path": str(workdir)}}).execute()
            seconds = time.perf_counter() - start
            merge_split_streams(nb)
            return seconds
    finally:
        if saved is None:
            os.environ.pop("CUDA_VISIBLE_DEVICES", None)
        else:
            os.environ["CUDA_VISIBLE_DEVICES"] = saved


def build_reference(course: Course, assignment: str) -> float:
    """Write notebooks/<assignment>.ipynb; returns how long it took to execute."""
    nb = reference_from_source(cells.read(course.source_notebook(assignment)), course.root)
    seconds = execute_on_cpu(nb, course.source_dir(assignment))
    nb.metadata["course"] = {"assignment": assignment, "executed_on": "cpu",
                             "execution_seconds": round(seconds, 1)}
    out = course.reference_notebook(assignment)
    out.parent.mkdir(exist_ok=True)
    nbformat.write(nb, str(out))
    return seconds
