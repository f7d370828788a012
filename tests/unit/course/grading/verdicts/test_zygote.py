"""course.grading.verdicts.zygote: the process that runs test code, confined (issue 23).

A real judge (its zygote in bubblewrap, a forked child per notebook) runs test code against a notebook's
names served by a plain subprocess (the answer server, as in test_remote.py). What is tested is what the
judge may see and do, and that what it returns is capped data.
"""

import os
import time

import pytest
from grading_support import COURSE, answer_kernel, notes_pipe

from course.grading.verdicts import zygote as judge_module
from course.grading.verdicts.zygote import JudgeFailed, JudgeServer
from course.grading.sandbox.policy import Limits, make_sandbox

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]      # a judge in bubblewrap, a kernel stand-in per test

NOTEBOOK = "def double(x):\n    return 2 * x\n"


@pytest.fixture(scope="module")
def server():
    sandbox, _ = make_sandbox([COURSE.root], Limits(memory=1 << 30), allow_unsandboxed=False)
    judge = JudgeServer(sandbox.for_worker(0, 1), threads=1)
    yield judge
    judge.stop()


@pytest.fixture
def run(server, tmp_path):
    """Run test code in a fresh notebook child of the judge; (outputs, failure)."""
    listener, kernel = answer_kernel(tmp_path, NOTEBOOK)
    notebook = server.open_notebook()

    def run(test_code: str, seconds: float = 60):
        sock, _ = listener.accept()
        with sock, notes_pipe(tmp_path) as notes:
            return notebook.run(test_code, "<test>", sock, seconds, notes)

    yield run
    notebook.close()
    kernel.kill()
    listener.close()


def errors(result):
    outputs, failure = result
    assert failure is None
    return [o for o in outputs if o.output_type == "error"]


def test_a_test_runs_in_the_judge_against_the_kernels_answers(run):
    assert errors(run("assert double(21) == 42")) == []
    assert errors(run("assert double(21) == 41"))[0].ename == "AssertionError"


def test_the_judge_sees_no_course_files_no_class_and_no_network_and_writes_only_its_tmp(run):
    checks = f"""
import os, socket
assert not os.path.exists({str(COURSE.root / "source")!r}), "the course's source/"
assert not os.path.exists({str(COURSE.root / "tests")!r}), "the course's tests/"
assert not os.path.exists({os.getcwd()!r} + "/gradebook.db")
try:
    open({str(COURSE.root / "course" / "planted.py")!r}, "w")
except OSError:
    pass
else:
    raise AssertionError("wrote into the course package")
try:
    socket.create_connection(("192.0.2.1", 9), timeout=1)
except OSError:
    pass
else:
    raise AssertionError("the network is reachable")
open("/tmp/mine", "w").write("ok")
"""
    if os.geteuid() == 0:
        checks += "assert os.getuid() != 0, 'the judge runs as root'\n"
    assert errors(run(checks)) == []
    assert not (COURSE.root / "course" / "planted.py").exists()


def test_the_judges_memory_is_capped(run):
    found = errors(run("block = bytearray(3 << 30)"))
    assert found and found[0].ename == "MemoryError"
    assert errors(run("assert double(1) == 2")) == []      # the notebook's judge goes on


def test_output_and_messages_are_capped(run):
    outputs, failure = run("print('x' * (5 << 20))\nraise AssertionError('y' * (10 << 20))")
    assert failure is None
    assert sum(len(o.get("text", "")) for o in outputs if o.output_type == "stream") <= 1 << 20
    error = next(o for o in outputs if o.output_type == "error")
    assert len(error.evalue) < 70_000


def test_a_judge_past_its_time_is_ended_as_the_graders_failure(run, server, monkeypatch):
    monkeypatch.setattr(judge_module, "GRACE", 2)
    started = time.monotonic()
    with pytest.raises(JudgeFailed):
        run("while True:\n    pass", seconds=1)
    assert time.monotonic() - started < 30
    assert server.proc is None          # the zygote went with it; the next notebook starts a fresh one


def test_what_a_test_imports_on_its_first_optimizer_is_imported_once_in_the_zygote(run):
    # Each notebook's child is forked from the zygote: an import there is paid once per worker, not per notebook.
    assert errors(run("import sys\nassert 'torch._dynamo' in sys.modules and 'sympy' in sys.modules")) == []


def test_no_other_process_of_the_judges_uid_can_read_a_notebooks_judge(run):
    # PR_GET_DUMPABLE (3) is 0: /proc/PID/mem, ptrace and pidfd_getfd are closed to a process a notebook left behind.
    assert errors(run("import ctypes\nassert ctypes.CDLL(None).prctl(3, 0, 0, 0, 0) == 0")) == []
