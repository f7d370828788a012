"""Text from a submission made inert for the TA: one function per channel it reaches the TA by.

A submission's text (a student id, a file or folder name, a grade id from a cell's metadata, an
exception's message) reaches a TA three ways, and each passes its one function here, where it is
written out:

- `terminal`: the terminal and plain-text files (`course grade`'s table, progress and problem lines,
  `grading_report.txt`). Control characters, escape sequences and direction overrides are spelled out
  (`\\x1b`, `\\n`, `\\u202e`), never interpreted, so a message cannot move the cursor, clear the screen,
  set the window's title or reorder what is shown; and one problem is one line, whatever it holds.
- `html`: a page (the class report): `terminal`'s text, HTML-escaped for element text and quoted
  attributes alike.
- `markdown_block`: Markdown that Jupyter, formgrader and the feedback render (the stand-in notebook in
  `autograded/`, the report's comment on a notebook): lines of `terminal`'s text in a fenced code block,
  the one Markdown construct whose content every renderer shows as text (no HTML, links, emphasis or
  math), and readable as it is where it is shown unrendered (formgrader's comment box).

- `spreadsheet`: a cell of `grades.csv`, which TAs open in a spreadsheet: `terminal`'s text, with a `'`
  in front of what a spreadsheet would take for a formula (`=`, `+`, `-`, `@`); the csv module quotes it.

What students' notebooks carry to the TA's browser (outputs, cells) is made inert by
`course.grading.active_content`.
"""

from __future__ import annotations

import html as _html
import re
import unicodedata

TERMINAL_WIDTH = 2000       # characters of one line, spelled out: a line, not pages of it
CUT = "…"
_SPELLED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_BACKTICKS = re.compile(r"`+")


def _visible(ch: str) -> str:
    """`ch` as it may be shown: itself where it is printable and draws itself, else its escape spelled out.

    Not printable (Python's rule) are the C0 and C1 controls, DEL, the separators but the space (line and
    paragraph separators among them), and the format characters (Cf: the direction overrides and isolates
    U+202A-202E and U+2066-2069, zero-width characters); also surrogates and unassigned code points.
    """
    if ch.isprintable() and unicodedata.category(ch) != "Cf":
        return ch
    if ch in _SPELLED:
        return _SPELLED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def terminal(text: object, width: int = TERMINAL_WIDTH) -> str:
    """`text` as one line that a terminal shows as written: nothing in it is interpreted (see the module
    docstring), cut at `width` characters."""
    line = "".join(map(_visible, str(text)))
    return line if len(line) <= width else line[: width - len(CUT)] + CUT


def html(text: object, width: int = TERMINAL_WIDTH) -> str:
    """`text` for an HTML page: one visible line (`terminal`), escaped for element text and attribute values."""
    return _html.escape(terminal(text, width), quote=True)


def markdown_block(lines: list[str], width: int = TERMINAL_WIDTH) -> str:
    """`lines` for a Markdown source: a fenced code block of one visible line each (`terminal`).

    The fence is longer than any run of backticks inside, so no line can close it (CommonMark, marked and
    mistune alike); a line of `terminal` cannot open anything of its own, as it holds no line break.
    """
    body = [terminal(line, width) for line in lines]
    longest = max((len(run) for line in body for run in _BACKTICKS.findall(line)), default=0)
    fence = "`" * max(3, longest + 1)
    return "\n".join([f"{fence}text", *body, fence])


_FORMULA_START = ("=", "+", "-", "@")


def spreadsheet(text: object) -> str:
    """A CSV cell of `text` (see the module docstring): one line, controls spelled out, never a formula."""
    shown = terminal(text)
    return "'" + shown if shown.startswith(_FORMULA_START) else shown
