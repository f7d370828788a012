"""course.grading.pool's scheduling with fake workers (no nbgrader, no kernel, no sandbox): every job comes back once,
a worker that dies or runs past the hard limit is replaced and its job is a failure of the grader's, a job
on_result asks for again is graded again, STOP starts no more; and a worker killed at the hard limit leaves nothing
behind (issue 23, second red team)."""

import os
import pickle
import socket
import subprocess
import sys
import tempfile
from multiprocessing.connection import Connection
from pathlib import Path
from types import SimpleNamespace

import pytest

from course.grading.contract import FailureKind, GradeResult, answers_prefix
from course.grading.pool import STOP, Pool, clear_worker
from course.grading.sandbox.host import control_groups
from course.grading.sandbox.policy import UIDS_PER_PROCESS, uid_block

# What a fake worker does with a job, by the job's student: `dies` ends the process, `hangs` never answers,
# anyone else is graded at once (the answer's log is the worker's pid).
FAKE_WORKER = """
import os, sys, time
from multiprocessing.connection import Connection
from course.grading.contract import GradeResult
conn = Connection(int(sys.argv[1]))
while True:
    try:
        job = conn.recv()
    except EOFError:
        break
    if job is None:
        break
    if job.student == "dies":
        os._exit(1)
    if job.student == "hangs":
        time.sleep(600)
    conn.send(GradeResult.scored(job, graded=True, record={"timestamp": None, "notebooks": {}},
                                 log=str(os.getpid())))
"""


def _fake_start(self, slot: int) -> None:
    mine, theirs = socket.socketpair()
    proc = subprocess.Popen([sys.executable, "-c", FAKE_WORKER, str(theirs.fileno())], pass_fds=(theirs.fileno(),))
    theirs.close()
    self._workers[slot] = (proc, Connection(mine.detach()))


@pytest.fixture
def fake_pool(monkeypatch):
    monkeypatch.setattr(Pool, "_start", _fake_start)
    made = []

    def make(jobs: int) -> Pool:
        made.append(Pool(jobs, threads_per_kernel=1))
        return made[-1]

    yield make
    for p in made:
        p.stop()


def job(student: str) -> SimpleNamespace:
    return SimpleNamespace(assignment="01", student=student, scratch=None)


def test_every_job_comes_back_once_and_the_workers_share_them(fake_pool):
    results, started = {}, []
    fake_pool(2).run([job(f"s{k}") for k in range(6)], hard_limit=60, on_start=lambda j: started.append(j.student),
                     on_result=lambda j, r: results.setdefault(j.student, []).append(r))
    assert sorted(started) == sorted(results) == [f"s{k}" for k in range(6)]
    assert all(len(r) == 1 and r[0].graded and r[0].student == s for s, r in results.items())
    assert len({r[0].log for r in results.values()}) == 2


def test_a_worker_that_dies_is_replaced_and_its_job_is_the_graders_failure(fake_pool):
    results = {}
    p = fake_pool(1)
    first = p._workers[0][0].pid
    p.run([job("dies"), job("after")], hard_limit=60, on_result=lambda j, r: results.update({j.student: r}))
    assert results["dies"].graded is False and results["dies"].failure.kind is FailureKind.WORKER_LOST
    assert results["after"].graded and results["after"].log != str(first)      # a fresh worker graded it


def test_a_job_past_the_hard_limit_is_stopped_and_the_next_one_graded(fake_pool):
    results = {}
    fake_pool(1).run([job("hangs"), job("after")], hard_limit=0.5,
                     on_result=lambda j, r: results.update({j.student: r}))
    assert results["hangs"].graded is False and results["hangs"].failure.kind is FailureKind.HARD_LIMIT
    assert results["after"].graded


def test_a_job_asked_for_again_is_graded_again_and_stop_starts_no_more(fake_pool):
    seen = []

    def again_once(j, r):
        seen.append(j.student)
        return seen.count(j.student) == 1 and j.student == "retry"

    fake_pool(1).run([job("retry"), job("other")], hard_limit=60, on_result=again_once)
    assert seen == ["retry", "other", "retry"]      # after the others waiting
    seen.clear()
    fake_pool(1).run([job("a"), job("b"), job("c")], hard_limit=60,
                     on_result=lambda j, r: seen.append(j.student) or STOP)
    assert seen == ["a", "b"]       # b was already sent when a's result stopped the run


def test_failures_of_the_grader_carry_the_job_and_no_score():
    failed = GradeResult.failed(job("x"), FailureKind.WORKER_LOST, "the grading process died")
    assert failed.graded is False and failed.record is None and failed.student == "x"


class RecordingExecutor:
    """An executor of the grader's failures only, in this process: what `course grade` hands any executor."""

    made: list["RecordingExecutor"] = []

    def __init__(self, processes: int, threads: int):
        self.processes, self.threads, self.ran, self.ended = processes, threads, [], None
        RecordingExecutor.made.append(self)

    def run(self, jobs, hard_limit, on_start=None, on_result=None):
        pending = list(jobs)
        while pending:
            job = pending.pop(0)
            self.ran.append(pickle.loads(pickle.dumps(job)))     # a cluster ships it: plain data
            on_start(job)
            result = GradeResult.failed(job, FailureKind.WORKER_LOST, "the cluster lost its worker")
            if on_result(job, pickle.loads(pickle.dumps(result))) is True:     # and ships the result back
                pending.append(job)

    def close(self):
        self.ended = "close"

    def stop(self):
        self.ended = "stop"


@pytest.mark.slow       # registers the assignment with nbgrader: seconds
def test_course_grade_runs_on_any_executor_and_a_lost_job_is_never_a_score(tmp_path):
    from e2e.test_grade_mechanics import CORRECT, MINI, _scores, hand_in, mini_course

    from course.grading.batch import grade
    from course.grading.contract import GradeOptions

    course = mini_course(tmp_path / "course")
    for student in ("ann", "bob"):
        hand_in(tmp_path / "class", course, student, CORRECT)
    RecordingExecutor.made.clear()
    run = grade(course, tmp_path / "class", [MINI], GradeOptions(jobs=2, allow_unsandboxed=True),
                say=lambda *a, **k: None, executor=RecordingExecutor)
    (executor,) = RecordingExecutor.made
    assert executor.processes == 2 and executor.ended == "stop"     # nothing graded: nothing to wait for
    assert sorted(j.student for j in executor.ran) == ["ann"] * 3 + ["bob"] * 3     # two more tries each
    assert all(j.assignment == MINI and j.template_db and j.sandbox_json for j in executor.ran)
    assert set(run.ungraded) == {("ann", MINI), ("bob", MINI)} and _scores(tmp_path / "class") == {}


GONE_WORKER = 4_000_000     # a pid no process has here (pids stay below 2**22)


def test_a_killed_workers_answer_folders_and_control_groups_are_removed():
    folder = Path(tempfile.mkdtemp(prefix=answers_prefix(GONE_WORKER)))
    (folder / "s").write_text("")
    other = Path(tempfile.mkdtemp(prefix=answers_prefix(GONE_WORKER + 1)))    # another worker's: kept
    first = uid_block(GONE_WORKER)
    groups = control_groups(str(first + 3), 1 << 30) + control_groups(str(first + UIDS_PER_PROCESS - 1), 1 << 30)
    neighbour = control_groups(str(first + UIDS_PER_PROCESS), 1 << 30)        # the next block's: kept
    try:
        clear_worker(GONE_WORKER)
        assert not folder.exists() and other.exists()
        assert not any(g.exists() for g in groups)
        assert all(g.exists() for g in neighbour)
    finally:
        os.rmdir(other)
        for group in neighbour:
            group.rmdir()
