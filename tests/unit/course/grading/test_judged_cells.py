"""course.grading.judged_cells: how a test cell goes to the judge, with the kernel and the judge stood in for (the
real ones meet in tests/e2e/test_grade_mechanics.py and tests/e2e/test_verdicts.py)."""

import ast
import os
import socket
import stat
from queue import Empty, Queue

import pytest
from nbformat.v4 import new_code_cell

from course.grading import judged_cells
from course.grading.contract import JUDGE_STOPPED, InfrastructureFailure, error_output
from course.grading.judged_cells import JudgedCells, byte_size
from course.grading.verdicts.notes import FIFO_NAME
from course.grading.verdicts.zygote import JudgeFailed


@pytest.mark.parametrize("text, size", [("abc", 3), ("é", 2), ("😀" * 3, 12), ("\udc80", 3), (None, 0), (b"ab", 0)])
def test_byte_size_counts_utf8_bytes_of_text_only(text, size):
    assert byte_size(text) == size


def _msg(parent, kind, **content):
    return {"parent_header": {"msg_id": parent}, "msg_type": kind, "content": content}


@pytest.fixture(autouse=True)
def _close_connections():
    yield
    while Kernel.opened:
        Kernel.opened.pop().close()


class Kernel:
    """A kernel client: `execute` connects to the socket the serve request names (as the answer server would),
    and iopub hands out the messages queued."""

    opened: list = []

    def __init__(self, connect=True):
        self.connect, self.iopub = connect, Queue()
        self.iopub_channel = self
        self.conn = None

    def execute(self, code, **_):
        path = ast.literal_eval(code[code.index("_course_serve(") + len("_course_serve("):code.index(", get_ipython")])
        self.path_mode = stat.S_IMODE(os.stat(path).st_mode)
        if self.connect:
            self.conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.conn.connect(path)
            Kernel.opened.append(self.conn)
        return "serve-1"

    def get_msg(self, timeout):
        try:
            return self.iopub.get_nowait()
        except Empty:
            raise Empty from None

    def is_alive(self):
        return False


class Judge:
    def __init__(self, outcome):
        self.outcome, self.runs = outcome, []

    def run(self, source, name, sock, seconds, notes):
        self.runs.append((source, name, notes))
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome

    def open_notebook(self):
        if isinstance(self.outcome, JudgeFailed):
            raise self.outcome
        return self


class Host(JudgedCells):
    """What JudgedCells takes of GuardedExecute."""

    def __init__(self, tmp_path, kernel, judge, output_per_cell=1 << 20):
        self.kc, self._answers, self._judge, self._judge_server = kernel, tmp_path, None, judge
        self.output_per_cell, self.cell_limit, self.resources = output_per_cell, 30, {}
        self._dropped, self.recorded = {}, []

    def _cell_timeout(self, cell):
        return 30

    def _note_dropped(self, cell, index):
        pass

    def _infrastructure(self, kind, detail):
        self.recorded.append((kind, detail))
        return InfrastructureFailure(kind, detail)


def _cell():
    cell = new_code_cell("assert answer() == 1", execution_count=7)
    cell.metadata["nbgrader"] = {"grade_id": "test_answer", "grade": True, "points": 1}
    return cell


def test_a_test_cell_gets_what_the_student_printed_and_the_judges_verdict(tmp_path):
    kernel = Kernel()
    kernel.iopub.put(_msg("other", "stream", name="stdout", text="not this test's\n"))
    kernel.iopub.put(_msg("serve-1", "stream", name="stdout", text="printed while serving\n"))
    kernel.iopub.put(_msg("serve-1", "execute_result", data={"text/plain": "2"}))     # nothing nbgrader scores
    kernel.iopub.put(_msg("serve-1", "status", execution_state="idle"))
    verdict = [error_output("AssertionError", "answer() was 2")]
    judge = Judge((verdict, None))
    host = Host(tmp_path, kernel, judge)
    cell, _ = host._test_outside(_cell(), 3)
    assert [o.get("text") or o.get("ename") for o in cell.outputs] == ["printed while serving\n", "AssertionError"]
    assert cell.execution_count is None
    source, name, (notes_fd, notes_path) = judge.runs[0]
    assert source == "assert answer() == 1" and name == "<test cell test_answer>"
    assert notes_path == str(tmp_path / FIFO_NAME) and stat.S_ISFIFO(os.stat(notes_path).st_mode)
    assert kernel.path_mode == 0o777                    # the kernel's own uid may connect
    assert not (tmp_path / "s").exists()                # the socket is gone after the test
    host._close_notes()
    assert host._notes_fds == []


def test_a_judge_that_stops_on_the_answers_fails_the_cell_and_the_next_test_gets_a_fresh_one(tmp_path):
    host = Host(tmp_path, Kernel(), Judge(JudgeFailed("it broke its protocol")))
    host._judge_server = Judge(([], None))
    host._judge_server.open_notebook = lambda: Judge(JudgeFailed("it broke its protocol"))
    cell, _ = host._test_outside(_cell(), 0)
    assert [o.ename for o in cell.outputs] == [JUDGE_STOPPED]
    assert "it broke its protocol" in cell.outputs[0].evalue
    assert host._judge is None
    host._close_notes()


def test_a_judge_that_cannot_start_is_the_graders_failure(tmp_path):
    host = Host(tmp_path, Kernel(), Judge(JudgeFailed("no torch")))
    with pytest.raises(InfrastructureFailure):
        host._test_outside(_cell(), 0)
    assert host.recorded[0][1] == "test_answer: no torch"
    host._close_notes()


def test_printed_output_over_the_cells_limit_is_cut_and_counted(tmp_path):
    kernel = Kernel()
    for text in ("12345", "678é90", "more"):
        kernel.iopub.put(_msg("serve-1", "stream", name="stderr", text=text))
    host = Host(tmp_path, kernel, None, output_per_cell=8)
    printed = judged_cells.run_sync(host._async_printed)("serve-1", 5, timeout=5)
    assert "".join(o.text for o in printed) == "12345678"
    assert {o.name for o in printed} == {"stderr"}
    assert host._dropped == {5: 4 + 4}          # 'é90' (4 of its 7 bytes) and all of 'more'
