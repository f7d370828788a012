"""Test cells run in the grader, against the student's names served by the kernel.

`course.grading.execute.GuardedExecute` hands each test cell here instead of to the kernel: the
cell's code (the course's, with its hidden tests, as nbgrader's OverwriteCells put it
back) runs in this process, in a namespace of its own that lasts the whole notebook. The
names it takes from the notebook are bound, just before it runs, to what the kernel
holds under them (`course.grading.verdicts.remote`): data comes over as the grader's own values, the
student's functions and classes as stand-ins, and a library's module or class as the
grader's own import. Pass, fail and message are this process's: the test's own
exception (or none), turned into the cell's outputs exactly where nbgrader reads them.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import linecache
import tempfile
import traceback

from nbformat.notebooknode import NotebookNode

import helpers.notebook_state
from course.grading.verdicts.connection import Channel, Connection
from course.grading.verdicts.mirror import Files
from course.grading.verdicts.state import global_state, set_global_state
from helpers.selfcheck import names_of

class Judge:
    """Runs one notebook's test cells in order, in one namespace, as the kernel would have."""

    def __init__(self):
        # The test's own files: a folder of this process's /tmp, mirrored to the kernel's folder of the same
        # path through the protocol (course.grading.verdicts.mirror), never shared.
        self.files = Files(tempfile.mkdtemp(prefix="course-files-"))
        self.namespace: dict = {"__name__": "__main__", "__builtins__": builtins}
        self.from_notebook: set[str] = set()     # names bound from the kernel rather than by a test
        self.channel = Channel()                 # stand-ins made by one test still work in the next

    def run(self, source: str, label: str, connection: Connection) -> tuple[list[NotebookNode], BaseException | None]:
        """The test's outputs (its printout, and its error if it failed), and the grader's own failure if one
        stopped it (the kernel gone or out of time: `course.grading.verdicts.remote.KernelGone`, `AnswerTimeout`)."""
        own_state = global_state()
        connection.channel = self.channel
        connection.files = self.files
        self.channel.connection = connection
        printed = io.StringIO()
        failure = None
        error = None
        try:
            connection.start()
            self._bind(source, connection)
            code = compile(source, label, "exec")
            linecache.cache[label] = (len(source), None, source.splitlines(keepends=True), label)
            with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed), self._files(), \
                    _probes_ask(connection):
                exec(code, self.namespace)
        except (ConnectionError, TimeoutError) as lost:
            failure = error = lost
        except BaseException as raised:  # noqa: BLE001 - a failing test is an exception of any kind, SystemExit too
            error = raised
        finally:
            if failure is None:
                try:
                    connection.finish()
                except (ConnectionError, TimeoutError) as lost:
                    failure = lost
            set_global_state(own_state)
        self.from_notebook -= names_of(source)[1]
        outputs = []
        if printed.getvalue():
            outputs.append(NotebookNode(output_type="stream", name="stdout", text=printed.getvalue()))
        if error is not None and failure is None:
            outputs.append(_error_output(error, label))
        return outputs, failure

    def _bind(self, source: str, connection: Connection) -> None:
        for name in names_of(source)[0]:
            if name in self.namespace and name not in self.from_notebook:
                continue        # an earlier test cell's own name
            try:
                self.namespace[name] = connection.request("name", name=name)
                self.from_notebook.add(name)
            except NameError:
                self.namespace.pop(name, None)

    @contextlib.contextmanager
    def _files(self):
        """The test's temporary files in the mirrored folder (see course.grading.verdicts.mirror)."""
        before = tempfile.tempdir
        tempfile.tempdir = self.files.root
        try:
            yield
        finally:
            tempfile.tempdir = before


@contextlib.contextmanager
def _probes_ask(connection: Connection):
    """helpers' probes of the notebook's process state (helpers.notebook_state) ask the kernel, and hear what
    the course's code in the sandbox wrote to the judge during this test (the connection's listener)."""
    helpers.notebook_state.ask = lambda probe, args, kwargs: connection.request("call", target=probe, args=args,
                                                                                  kwargs=kwargs)
    helpers.notebook_state.listener = connection.listener
    try:
        yield
    finally:
        helpers.notebook_state.ask = None
        helpers.notebook_state.listener = None


def _error_output(error: BaseException, label: str) -> NotebookNode:
    ename, evalue = type(error).__name__, str(error)
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == label]
    lines = ["Traceback (in the test cell, run by the grader):"]
    lines += [f"  line {f.lineno}: {f.line}" for f in frames]
    lines.append(f"\x1b[0;31m{ename}\x1b[0m: {evalue}")
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=lines)
