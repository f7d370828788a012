"""Test cells outside the student's kernel: `GuardedExecute` (course.grading.execute) hands each test cell to
the worker's judge (course.grading.verdicts) instead of running it in the kernel. The kernel is asked to serve
the notebook's names on a socket in the grader's own folder; the judge runs the test against them and its
verdict becomes the cell's outputs, beside what the student's code printed while serving."""

from __future__ import annotations

import os
import socket
from queue import Empty
from time import monotonic

from jupyter_core.utils import ensure_async, run_sync
from nbformat.notebooknode import NotebookNode

from course.grading.contract import JUDGE_FAILED, JUDGE_STOPPED, AnswerTimeout, KernelGone, error_output
from course.grading.kernel.loading import serve_code
from course.grading.verdicts.notes import FIFO_NAME, make_fifo, open_reader
from course.grading.verdicts.zygote import JudgeFailed, utf8_prefix

# Seconds a quiet request or the start of a test may take; a kernel slower than this is not answering.
QUIET_TIMEOUT = 20


def byte_size(text) -> int:
    """Bytes, not characters: a million emoji are four million bytes of notebook."""
    return len(text.encode("utf-8", "surrogatepass")) if type(text) is str else 0


class JudgedCells:
    """The part of `GuardedExecute` that runs test cells in the judge (a mixin: it uses the executor's kernel
    client, answer folder, judge and limits)."""

    def _test_outside(self, cell, index: int):
        """Run test `cell` here (course.grading.verdicts.judge), the notebook's names served by the kernel."""
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", f"cell {index + 1}")
        path = self._answers / "s"
        path.unlink(missing_ok=True)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(str(path))
            os.chmod(path, 0o777)       # the kernel runs as a uid of its own (the folder is the grader's alone)
            listener.listen(1)
            msg_id = self.kc.execute(serve_code(str(path)), silent=False, store_history=False, allow_stdin=False,
                                     stop_on_error=False)
            deadline = monotonic() + self._cell_timeout(cell)
            listener.settimeout(min(QUIET_TIMEOUT, max(1.0, deadline - monotonic())))
            try:
                sock, _ = listener.accept()
            except socket.timeout:
                sock = None
        finally:
            listener.close()
            path.unlink(missing_ok=True)
        if sock is None:
            outputs, failure = [], KernelGone("the kernel did not start serving the test")
        else:
            with sock:
                try:
                    if self._judge is None:
                        self._judge = self._judge_server.open_notebook()
                except JudgeFailed as error:     # it could not start: the grader's failure
                    raise self._infrastructure(JUDGE_FAILED, f"{grade_id}: {error}") from error
                try:
                    outputs, failure = self._judge.run(cell.source, f"<test cell {grade_id}>", sock,
                                                       max(1.0, deadline - monotonic()), self._notes())
                except JudgeFailed as error:
                    # A judge that was ready and fails on this test failed on what the kernel answered: the
                    # cell fails; the next test cell gets a fresh judge (names earlier tests made are gone).
                    self._judge = None
                    outputs, failure = [error_output(JUDGE_STOPPED, f"the judge stopped on this test's answers "
                                                                    f"({error})")], None
        if isinstance(failure, AnswerTimeout):
            run_sync(self.km.interrupt_kernel)()
        printed = run_sync(self._async_printed)(msg_id, index, timeout=QUIET_TIMEOUT)
        cell.outputs = printed + outputs
        cell.execution_count = None
        self._note_dropped(cell, index)
        if failure is not None:
            if isinstance(failure, AnswerTimeout):
                cell.outputs.append(error_output("CellTimeoutError", f"the test ran past its {self.cell_limit} s: "
                                                                     f"{failure}"))
            else:
                cell.outputs.append(self._died(f"{failure} (os._exit, a crash, or a resource limit)"))
            if not self._responsive():
                self._recover(index)
        return cell, self.resources

    def _notes(self) -> tuple[int, str]:
        """The read end of the notes FIFO (course.grading.verdicts.notes) and its path, made at the first test
        cell. The grader holds a write end as well: a reader of a FIFO whose writers all left sees its end, and
        would never block again."""
        if not getattr(self, "_notes_fds", None):
            path = make_fifo(self._answers)
            self._notes_fds = [open_reader(path)]
            self._notes_fds.append(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        return self._notes_fds[0], str(self._answers / FIFO_NAME)

    def _close_notes(self) -> None:
        for fd in getattr(self, "_notes_fds", None) or []:
            os.close(fd)
        self._notes_fds = []

    async def _async_printed(self, msg_id: str, index: int, timeout: float) -> list:
        """What the student's code printed while serving the test (streams only: no result, no error,
        nothing nbgrader would score), until the kernel is idle again."""
        printed: list = []
        deadline = monotonic() + timeout
        used = 0
        while monotonic() < deadline:
            try:
                msg = await ensure_async(self.kc.iopub_channel.get_msg(timeout=min(1.0, deadline - monotonic())))
            except Empty:
                if not await ensure_async(self.kc.is_alive()):
                    break
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "status" and msg["content"].get("execution_state") == "idle":
                break
            if msg["msg_type"] == "stream":
                text = msg["content"].get("text", "")
                size, room = byte_size(text), self.output_per_cell - used
                if size > room:
                    self._dropped[index] = self._dropped.get(index, 0) + size - max(room, 0)
                    text = utf8_prefix(text, max(room, 0))
                used += byte_size(text)
                if text:
                    printed.append(NotebookNode(output_type="stream", name=msg["content"].get("name", "stdout"),
                                                text=text))
        return printed
