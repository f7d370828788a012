"""Feedback HTML that shows students their results but not the hidden tests.

nbgrader's autograde puts the hidden tests back into the autograded notebook (that is
how they run), and `generate_feedback` renders that notebook as it is: the hidden tests'
code ends up in the HTML a student receives, in the test cells and in the tracebacks of
failed tests. `HideHiddenTests`, added to `GenerateFeedback.preprocessors`, removes it:

- the hidden region of every test cell is replaced by one comment line;
- the traceback of an error in a test cell is cut down to its last line
  (`AssertionError: what was checked: expected ..., got ...`), which is the message a
  student needs; the frames above it would quote the hidden code;
- any output anywhere that still quotes a line of hidden test code (a student can print
  the running cell's source) has that line replaced.

`HoldFlaggedFeedback` goes first: a notebook flagged in the gradebook gets no feedback until a
TA takes the flag off. `configure` sets both, for `course grade` and, through
nbgrader_config.py, for `nbgrader generate_feedback` and formgrader's Generate Feedback.
"""

from __future__ import annotations

import html
import json
import re
import sys
from collections import OrderedDict
from pathlib import Path

from jinja2 import BytecodeCache
from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.exporters.html import WidgetsDataTypeFilter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.utils.base import NbConvertBase
from nbgrader.preprocessors import NbGraderPreprocessor

from course.notebook import cells
from course.notebook.cells import HIDDEN_BEGIN, hidden_lines, without_hidden

REDACTED = "[hidden test code]"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class HideHiddenTests(NbGraderPreprocessor):
    """Remove hidden tests' code from a notebook about to become feedback (see the module docstring)."""

    def preprocess(self, nb, resources):
        secret: set[str] = set()
        for cell in nb.cells:
            if cell.cell_type == "code" and HIDDEN_BEGIN in cell.source:
                secret.update(hidden_lines(cell.source))
                cell.source = without_hidden(cell.source)
        # Longest first, so that a line containing a shorter one is replaced whole.
        self._secret = sorted(secret, key=len, reverse=True)
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            test = cells.is_test(cell)
            for output in cell.get("outputs", []):
                if output.output_type == "error" and test:
                    output.traceback = [f"{output.ename}: {output.evalue}"]
                self._scrub(output)
        return nb, resources

    def _scrub(self, output) -> None:
        if "text" in output:
            output.text = self._redact(output.text)
        if output.output_type == "error":
            output.evalue = self._redact(output.evalue)
            output.traceback = [self._redact(line) for line in output.traceback]
        for mime, value in list(output.get("data", {}).items()):
            if mime == "text/html" and isinstance(value, str) and self._quotes(html.unescape(value)):
                output.data[mime] = f"<pre>{REDACTED}</pre>"
            elif isinstance(value, str):
                output.data[mime] = self._redact(value)
            elif isinstance(value, list):
                output.data[mime] = [self._redact(v) if isinstance(v, str) else v for v in value]

    def _quotes(self, text: str) -> bool:
        return any(line in text for line in self._secret)

    def _redact(self, text: str) -> str:
        plain = _ANSI.sub("", text)
        if not self._quotes(plain):
            return text
        for line in self._secret:
            plain = plain.replace(line, REDACTED)
        return plain


class FeedbackHeldBack(RuntimeError):
    """Raised for a flagged submission: its feedback waits for a TA's look."""


HELD_BACK = ("feedback held back: {student}'s {notebook}.ipynb of {assignment} is flagged for review in the "
             "gradebook (the grading report names it; the reason is in a comment on the notebook). After a "
             "look, unflag it in formgrader, then generate its feedback.")


class HoldFlaggedFeedback(NbGraderPreprocessor):
    """Refuse feedback for a notebook flagged in the gradebook.

    `course grade` flags every submission its report names; output of a cell that tampers with
    the grading may carry the hidden tests in a disguise `HideHiddenTests` cannot recognise, so
    such feedback is released only after a TA has looked and taken the flag off.
    """

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook, MissingEntry

        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            try:
                flagged = gb.find_submission_notebook(info["notebook"], info["assignment"], info["student"]).flagged
            except MissingEntry:
                flagged = False     # GetGrades, next, says that the submission is unknown
        if flagged:
            message = HELD_BACK.format(**info)
            self.log.error(message)
            raise FeedbackHeldBack(message)
        return nb, resources


def configure(config) -> None:
    """Make nbgrader's GenerateFeedback, under this traitlets `config`, write the course's feedback:
    nbgrader's own steps, with flagged notebooks held back first and the hidden tests removed last."""
    from nbgrader.converters import GenerateFeedback

    defaults = GenerateFeedback.class_traits()["preprocessors"].default()
    config.GenerateFeedback.preprocessors = [HoldFlaggedFeedback, *defaults, HideHiddenTests]
    config.GenerateFeedback.exporter_class = FeedbackExporter


class _CompiledTemplates(BytecodeCache):
    """Jinja's compiled templates, kept in memory for every exporter of this process."""

    def __init__(self):
        self._code = {}

    def load_bytecode(self, bucket) -> None:
        code = self._code.get((bucket.key, bucket.checksum))
        if code is not None:
            bucket.code = code

    def dump_bytecode(self, bucket) -> None:
        self._code[(bucket.key, bucket.checksum)] = bucket.code


_ALT_TEXT = "No description has been provided for this image"
_IMG_WITHOUT_ALT = re.compile(r"<img(?![^>]*\balt=)", re.IGNORECASE)


class FeedbackExporter(HTMLExporter):
    """nbgrader's feedback HTML, made fast for a worker that renders notebook after notebook.

    nbgrader builds a new exporter for every notebook, and the HTML exporter then spends
    most of its time on work that is the same for every student of an assignment:
    compiling the templates, rendering the same markdown cells and highlighting the
    same given code, and last parsing the whole page again with BeautifulSoup only to add
    attributes. Here the compiled templates are shared by the exporters of the process,
    markdown and highlighting are remembered by their input (they are pure functions of
    it), and the one attribute the page needs from that last pass, the images' alt text,
    is added directly. (The same pass marks `.jp-Notebook` cells focusable; the classic
    template that nbgrader's feedback extends has no such cells.)
    """

    _compiled = _CompiledTemplates()

    def get_prefix_root_dirs(self):
        # nbconvert's templates are installed beside nbconvert, in its installation's share/jupyter, which
        # Jupyter's data path omits when this Python is another environment that reaches nbconvert (a TA's
        # virtual environment made with --system-site-packages: the base Python's; one chained to another
        # environment's site-packages: that one's).
        dirs = super().get_prefix_root_dirs()
        import nbconvert

        installed = Path(nbconvert.__file__).resolve().parents[4]     # <prefix>/lib/pythonX.Y/site-packages/nbconvert
        extra = [str(p / "share" / "jupyter") for p in (installed, Path(sys.base_prefix))]
        return [*dirs, *(d for d in dict.fromkeys(extra) if d not in dirs)]

    def _create_environment(self):
        environment = super()._create_environment()
        environment.bytecode_cache = self._compiled
        return environment

    def markdown2html(self, context, source):
        cell = context.get("cell", {})
        if cell.get("attachments"):
            return super().markdown2html(context, source)
        path = context.get("resources", {}).get("metadata", {}).get("path", "")
        return _markdown(self, context, source, path)

    markdown2html.jinja_pass_arg = HTMLExporter.markdown2html.jinja_pass_arg  # a context filter, as in nbconvert

    def from_notebook_node(self, nb, resources=None, **kw):
        # HTMLExporter.from_notebook_node, without its BeautifulSoup pass (see the class docstring).
        langinfo = nb.metadata.get("language_info", {})
        lexer = langinfo.get("pygments_lexer", langinfo.get("name", None))
        self.register_filter("highlight_code", self.filters.get("highlight_code", _Highlight(lexer, self)))
        resources = self._init_resources(resources)
        self.register_filter("filter_data_type", WidgetsDataTypeFilter(
            notebook_metadata=self._nb_metadata, parent=self, resources=resources))
        page, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        return _IMG_WITHOUT_ALT.sub(f'<img alt="{_ALT_TEXT}"', page), resources


class _Remembered:
    """The results of a pure function by a key that holds all its inputs, the latest `size` of them."""

    def __init__(self, size: int):
        self._size = size
        self._results: OrderedDict = OrderedDict()

    def __call__(self, key, compute):
        if key in self._results:
            self._results.move_to_end(key)
            return self._results[key]
        value = self._results[key] = compute()
        if len(self._results) > self._size:
            self._results.popitem(last=False)
        return value


_MARKDOWN = _Remembered(4096)
_HIGHLIGHTED = _Remembered(8192)


def _markdown(exporter: HTMLExporter, context, source: str, path: str) -> str:
    # The rendering depends on these settings of the exporter, the source and the path alone.
    key = (_settings(exporter.embed_images, exporter.anchor_link_text, exporter.exclude_anchor_links,
                     exporter.lexer_options), source, path)
    return _MARKDOWN(key, lambda: HTMLExporter.markdown2html(exporter, context, source))


class _Highlight(NbConvertBase):
    """nbconvert's Highlight2HTML, remembering what it highlighted."""

    def __init__(self, lexer, parent):
        super().__init__(parent=parent)
        self._highlight = Highlight2HTML(pygments_lexer=lexer, parent=parent)

    def __call__(self, source, language=None, metadata=None):
        key = (self._highlight.pygments_lexer, _settings(self._highlight.extra_formatter_options), source,
               language, _settings(metadata))
        return _HIGHLIGHTED(key, lambda: self._highlight(source, language, metadata))


def _settings(*values) -> str:
    return json.dumps(values, sort_keys=True, default=str)
