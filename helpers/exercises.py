"""How test cells and demo cells treat an exercise: strict when graded, readable while a student works.

A test cell puts its checks in `with checking("broadcast_shape"):`. A demo cell that calls a
student's function puts its code in `with once_written("train_one_epoch", shows="..."):`.

Graded, a failing check raises exactly as it would without the `with`: under nbgrader's
autograde and Validate (which set NBGRADER_EXECUTION in the kernel), under `course grade`
(which runs test cells in a process of its own, outside any kernel), in the self-check, and
anywhere outside a Jupyter kernel. So every cell scores as before.

In a student's own kernel (JupyterLab, Colab, a notebook run by nbclient), a test cell instead
prints what happened and lets the run go on, so that Run All reaches the end of the notebook:

    ✓ broadcast_shape passed this test
    TODO broadcast_shape is not written yet: ...
    ✗ broadcast_shape failed this test: <the message>      (on stderr, with the lines concerned)

A demo cell whose exercise is not written yet says what it will show once it is.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import traceback
import types
from pathlib import Path

_HELPERS = str(Path(__file__).resolve().parent)
_strict = contextvars.ContextVar("strict", default=False)


@contextlib.contextmanager
def strict():
    """Within this block, test cells raise their failures whatever the kernel (the self-check uses it)."""
    token = _strict.set(True)
    try:
        yield
    finally:
        _strict.reset(token)


def _shell():
    """The IPython shell of the Jupyter kernel this code runs in, or None (plain Python, the grader)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell if getattr(shell, "kernel", None) is not None else None


def working() -> bool:
    """Whether a student is working in a Jupyter kernel, rather than the notebook being graded."""
    return not _strict.get() and not os.environ.get("NBGRADER_EXECUTION") and _shell() is not None


def _keep_for_debugger(error: BaseException) -> None:
    """Make `%tb` and `%debug` in a later cell show this error, as if it had not been caught.

    IPython leaves out the first frame of a traceback (for an uncaught error, its own `exec`); this one
    starts at the cell, so a frame of ours goes first, for IPython to leave out instead."""
    here = sys._getframe()
    error.__traceback__ = types.TracebackType(error.__traceback__, here, here.f_lasti, here.f_lineno)
    sys.last_type, sys.last_value, sys.last_traceback = type(error), error, error.__traceback__
    sys.last_exc = error        # Python 3.12 and later


def _cell_name(filename: str) -> str | None:
    """'In [5]' for code run from a notebook cell, None for a file (a library, the course's helpers)."""
    shell = _shell()
    code_name = getattr(getattr(shell, "compile", None), "format_code_name", None)
    if code_name is not None:
        named = code_name(filename)
        if named:
            return named[1].replace("In[", "In [")
    return None


def where(error: BaseException, this_cell: str | None = None) -> list[str]:
    """The lines of notebook cells the error went through, innermost first: the student's own code, then
    the test's line that called it. Frames of the course's helpers, of torch and of Python are left out."""
    lines = []
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        if frame.filename.startswith(_HELPERS):
            continue
        name = "this cell" if frame.filename == this_cell else _cell_name(frame.filename)
        if name is None:
            continue
        code = (frame.line or "").strip()
        lines.append(f"{name}, line {frame.lineno}: {code}")
    return lines


def reason(error: BaseException) -> str:
    """What went wrong, in one line: a check's own message, or the error the student's code raised."""
    if isinstance(error, AssertionError) and str(error):
        return str(error)
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def _failure_lines(name: str, error: BaseException, places: list[str], head: str) -> list[str]:
    """The message first, then the notebook lines it went through (at most four)."""
    lines = [f"✗ {name} {head}: {reason(error)}"]
    if places:
        lines.append("  where: " + places[0])
        lines += [f"         {p}" for p in places[1:4]]
    return lines


def _report_failure(name: str, error: BaseException, this_cell: str | None, head: str) -> None:
    lines = _failure_lines(name, error, where(error, this_cell), head)
    lines.append(f"  Fix {name} in its cell, run that cell, then this one again. "
                 "(%tb in a new cell shows the full traceback.)")
    _say("\n".join(lines), sys.stderr)


def _shown_short(name: str, error: BaseException, this_cell: str | None) -> None:
    """Graded in a kernel (nbgrader's Validate, `nbgrader autograde`): the error still raises, and is scored as
    before, but what its output shows (Validate's dialog, the feedback) is the message first and the student's
    own lines, instead of a traceback through the course's helpers (IPython's `_render_traceback_`). The test
    cell's own lines are left out: graded, they may be hidden tests."""
    if isinstance(error, NotImplementedError):
        lines = [_todo(name)]
    else:
        places = [p for p in where(error, this_cell) if not p.startswith("this cell")]
        head = "failed this test" if isinstance(error, AssertionError) else "raised an error in this test"
        lines = _failure_lines(name, error, places, head)
    try:
        error._render_traceback_ = lambda: lines
    except AttributeError:      # an exception class without a __dict__: shown as IPython shows it
        pass


def _say(text: str, stream=None) -> None:
    """`text` and its newline in one write (print writes them apart, and Jupyter can show two outputs)."""
    stream = stream or sys.stdout
    stream.write(text + "\n")
    stream.flush()


def _todo(name: str) -> str:
    return (f"TODO {name} is not written yet: in its cell, replace `raise NotImplementedError()` "
            f"with your code, run that cell, then this one.")


class checking(contextlib.AbstractContextManager):
    """`with checking("name"):` around a test cell's checks of the exercise `name` (see the module docstring)."""

    def __init__(self, name: str):
        self.name = name
        self.cell = sys._getframe(1).f_code.co_filename      # the test cell's own code

    def __exit__(self, kind, error, tb):
        if not working():               # graded: the failure raises, as without the `with`
            if isinstance(error, Exception) and _shell() is not None:
                _shown_short(self.name, error, self.cell)
            return False
        if error is None:
            _say(f"✓ {self.name} passed this test")
            return False
        if not isinstance(error, Exception):
            return False                # Ctrl-C, SystemExit: never swallowed
        _keep_for_debugger(error)
        if isinstance(error, NotImplementedError):
            _say(_todo(self.name))
        else:
            _report_failure(self.name, error, self.cell,
                            "failed this test" if isinstance(error, AssertionError) else "raised an error in this test")
        return True


class once_written(contextlib.AbstractContextManager):
    """`with once_written("name", shows="..."):` around a demo cell that calls the exercise `name`
    (or several: `once_written("a", "b", shows=...)`).

    Until they are written (one raises NotImplementedError), the cell says what it will show
    once they are, and the run goes on. Any other error is shown, message first, while a student
    works, and raises when graded (a reference notebook's demo must not fail).
    """

    def __init__(self, *names: str, shows: str):
        self.names, self.shows = names, shows
        self.cell = sys._getframe(1).f_code.co_filename

    def _named(self) -> str:
        return self.names[0] if len(self.names) == 1 else ", ".join(self.names[:-1]) + " or " + self.names[-1]

    def __exit__(self, kind, error, tb):
        if error is None or not isinstance(error, Exception):
            return False
        if isinstance(error, NotImplementedError):
            written = "is not written yet" if len(self.names) == 1 else "is not written yet (one of them)"
            _say(f"({self._named()} {written}. Once written, this cell shows {self.shows}.)")
            return True
        if not working():
            return False
        _keep_for_debugger(error)
        _report_failure(self._named(), error, self.cell, "stopped this cell")
        return True
