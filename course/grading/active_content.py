"""An autograded notebook made inert before a TA's browser or a student's feedback renders it.

Formgrader and the feedback render a notebook with nbconvert, which puts a `text/html` output, a raw cell
and the HTML inside a Markdown cell into the page as they are, and runs an `application/javascript` output:
whatever a student's code displayed or a student wrote would run in the TA's session on the Jupyter
server's origin, whose API runs code on the TA's machine. So, after nbgrader's autograde (the scores are in
the gradebook by then, read from error outputs that stay as they are) and before the feedback is made:

- an output keeps only the kinds of data that render inert (`INERT`: plain text, bitmap images); the text
  of a removed kind (HTML, Markdown, LaTeX, SVG, which can carry script) becomes its plain text where it
  had none, and a note in the cell's outputs says what was removed;
- a Markdown or raw cell that is not the instructor's as released (a student wrote or edited it) is shown
  as its text (`inert.markdown_block`); the course grades no Markdown answers, so nothing graded changes;
- the notebook's widget state goes: it is the kernel's, so the student's, and an HTML widget renders its
  value as HTML. Widget views (`application/vnd.jupyter.widget-view+json`) go with it: without the state
  they render nothing, and their plain text stays.
"""

from __future__ import annotations

from pathlib import Path

from course.grading.inert import markdown_block

INERT = ("text/plain", "image/png", "image/jpeg", "image/gif")
NOTE = ("[course grade: this output's {kinds} removed: a student's output may carry script, which would "
        "run in the grader's browser]\n")


def given_markdown(source: Path) -> set[str]:
    """The sources of the Markdown cells of the instructor's notebooks in `source` (a checkout's
    `source/<assignment>` folder, as `course grade` hands it to a job), as written and as released."""
    import nbformat

    from course.checkout import fill_placeholders

    found = set()
    for path in sorted(source.glob("*.ipynb")):
        for cell in nbformat.read(str(path), as_version=4).cells:
            if cell.cell_type == "markdown":
                found |= {cell.source, fill_placeholders(cell.source, source.parents[1])}
    return found


def make_inert_folder(folder: Path, given_markdown: set[str]) -> None:
    """`make_inert` on every notebook in `folder`, written back in place."""
    import nbformat

    for path in sorted(folder.glob("*.ipynb")):
        nb = nbformat.read(str(path), as_version=4)
        make_inert(nb, given_markdown)
        nbformat.write(nb, str(path))


def make_inert(nb, given_markdown: set[str]) -> None:
    """Make `nb` inert in place (see the module docstring); `given_markdown`: the sources of the instructor's
    Markdown cells, which stay as they are."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type == "code":
            _outputs(cell)
        elif cell.cell_type == "raw" or (cell.cell_type == "markdown" and cell.source not in given_markdown):
            _as_text(cell)


def _outputs(cell) -> None:
    removed: list[str] = []
    for output in cell.get("outputs", []):
        data = output.get("data")
        if not isinstance(data, dict):
            continue
        output["metadata"] = _inert_metadata(output.get("metadata"))
        active = sorted(mime for mime in data if mime not in INERT)
        if not active:
            continue
        if "text/plain" not in data:
            text = next((_text(data[mime]) for mime in active if _text(data[mime]) is not None), None)
            if text is not None:
                data["text/plain"] = text
        for mime in active:
            del data[mime]
        removed += active
    if removed:
        import nbformat

        kinds = ", ".join(dict.fromkeys(removed))
        cell.outputs.append(nbformat.v4.new_output("stream", name="stdout", text=NOTE.format(kinds=kinds)))


def _sizes(meta) -> dict:
    return {k: v for k, v in meta.items() if k in ("width", "height") and type(v) is int} \
        if isinstance(meta, dict) else {}


def _inert_metadata(meta) -> dict:
    """An output's metadata with nothing but whole-number sizes: nbconvert writes an image's `width` and
    `height` into its <img> tag unquoted (a value `1 onerror=...` adds an attribute) and its `filenames`
    as the src (a request from the TA's session)."""
    if not isinstance(meta, dict):
        return {}
    kept = _sizes(meta)
    for mime in INERT:
        if _sizes(meta.get(mime)):
            kept[mime] = _sizes(meta.get(mime))
    return kept


def _text(value) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(value)
    return None


def _as_text(cell) -> None:
    import nbformat

    text = nbformat.v4.new_markdown_cell(markdown_block(cell.source.splitlines()))
    text.metadata = cell.metadata
    text.metadata.pop("raw_mimetype", None)
    text.metadata.pop("format", None)
    cell.clear()
    cell.update(text)
