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
"""

from __future__ import annotations

import html
import re

from nbgrader.preprocessors import NbGraderPreprocessor

from .cells import HIDDEN_BEGIN, HIDDEN_END

HIDDEN_NOTE = "# (hidden tests: not shown)"
REDACTED = "[hidden test code]"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def hidden_lines(source: str) -> list[str]:
    """The lines of `source` between the hidden-test markers that could identify the test."""
    lines, inside = [], False
    for line in source.splitlines():
        stripped = line.strip()
        if stripped == HIDDEN_BEGIN:
            inside = True
        elif stripped == HIDDEN_END:
            inside = False
        elif inside and len(stripped) >= 8 and not stripped.startswith("#"):
            lines.append(stripped)
    return lines


def without_hidden(source: str) -> str:
    out, inside = [], False
    for line in source.splitlines():
        stripped = line.strip()
        if stripped == HIDDEN_BEGIN:
            inside = True
            out.append(line[: len(line) - len(line.lstrip())] + HIDDEN_NOTE)
        elif stripped == HIDDEN_END:
            inside = False
        elif not inside:
            out.append(line)
    return "\n".join(out)


def _is_test(cell) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


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
            test = _is_test(cell)
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
