"""A pool of long-lived grading processes with a hard time limit per job.

Each worker imports nbgrader once and then grades one submission after another
(starting nbgrader afresh for every notebook would cost seconds each). The parent sends a
job, waits, and kills a worker whose job runs past its hard limit (a kernel that ignores
every time limit, a hang in nbgrader itself); the killed worker's sandbox dies with it
(bubblewrap's --die-with-parent, and every process of the worker's uids is killed), a
fresh worker takes its place, and the job comes back as a failure of the grader's
(`GradeResult.failed`, `FailureKind.HARD_LIMIT` or `WORKER_LOST`), never as a score; `on_result` may ask for
it to be run again.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from dataclasses import replace
from multiprocessing.connection import Connection, wait
from pathlib import Path

from course.grading.contract import FailureKind, GradeResult, answers_prefix
from course.grading.sandbox.host import remove_block_groups
from course.grading.sandbox.policy import UIDS_PER_PROCESS, uid_block
from course.grading.sandbox.processes import clear_uid_block, descendants


def _worker_main(fd: int, slot: int, threads: int) -> None:
    from course.grading.sandbox.host import private_mounts
    from course.grading.sandbox.policy import Sandbox

    private_mounts()    # first, while this process has one thread: the kernels' socket folders get capped
    from course.grading.worker import grade_submission
    from course.notebook.nbgrader_runs import quiet_nbgrader_warnings

    quiet_nbgrader_warnings()
    # Import now what the first job needs (seconds), while the parent prepares the jobs. Not torch: the tests
    # run in the judge (course.grading.verdicts.zygote), with the worker's share of the cores; this process only
    # moves notebooks and bytes.
    from nbgrader.apps import NbGraderAPI  # noqa: F401

    from course.grading import execute  # noqa: F401
    conn = Connection(fd)
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        sandbox = Sandbox.from_json(job.sandbox_json).for_worker(slot, threads)
        conn.send(grade_submission(replace(job, sandbox_json=sandbox.to_json())))


class Pool:
    """`jobs` worker processes; `run` grades a list of jobs; `close` (or `stop`) when done."""

    def __init__(self, jobs: int, threads_per_kernel: int):
        self.threads = threads_per_kernel
        self._workers: dict[int, tuple] = {}
        for slot in range(jobs):
            self._start(slot)

    def _start(self, slot: int) -> None:
        # A fresh interpreter running this module, not multiprocessing's spawn: spawn would
        # re-run the caller's main script in every worker.
        mine, theirs = socket.socketpair()
        proc = subprocess.Popen([sys.executable, "-m", "course.grading.pool", str(theirs.fileno()), str(slot), str(self.threads)],
                                pass_fds=(theirs.fileno(),))
        theirs.close()
        self._workers[slot] = (proc, Connection(mine.detach()))

    def run(self, jobs, hard_limit: float, on_start=None, on_result=None):
        """Grade `jobs`; call on_start(job) and on_result(job, result) as they happen (in this process).

        When on_result returns True the job is graded again, after the others waiting; when
        it returns STOP no job is started any more.
        """
        pending = deque(jobs)
        busy: dict[int, tuple] = {}      # slot -> (job, started)

        def filed(job, result) -> None:
            verdict = on_result(job, result) if on_result else None
            if verdict is STOP:
                pending.clear()
            elif verdict:
                pending.append(job)

        def dispatch(slot: int) -> None:
            if pending:
                job = pending.popleft()
                self._workers[slot][1].send(job)
                busy[slot] = (job, time.monotonic())
                if on_start:
                    on_start(job)

        while pending or busy:
            for slot in sorted(self._workers):
                if slot not in busy:
                    dispatch(slot)
            conns = {self._workers[slot][1]: slot for slot in busy}
            for conn in wait(list(conns), timeout=1.0):
                slot = conns[conn]
                job, _ = busy.pop(slot)
                try:
                    result = conn.recv()
                except (EOFError, OSError):
                    result = GradeResult.failed(job, FailureKind.WORKER_LOST, "the grading process died")
                    self._replace(slot)
                dispatch(slot)      # the worker grades the next one while on_result files this one
                filed(job, result)
            now = time.monotonic()
            for slot, (job, started) in list(busy.items()):
                if now - started > hard_limit:
                    busy.pop(slot)
                    self._replace(slot)
                    filed(job, GradeResult.failed(job, FailureKind.HARD_LIMIT,
                                                  f"grading took longer than {hard_limit:.0f} s and was stopped"))

    def _replace(self, slot: int) -> None:
        proc, conn = self._workers.pop(slot)
        proc.kill()
        proc.wait(10)
        conn.close()
        clear_worker(proc.pid)
        self._start(slot)

    def close(self) -> None:
        for proc, conn in self._workers.values():
            try:
                conn.send(None)
            except (OSError, BrokenPipeError):
                pass
        # It has nothing left to write, and an interpreter that imported torch and nbgrader takes seconds to
        # end: a short wait, then the kill, and what a killed worker may leave is cleared.
        deadline = time.monotonic() + 0.2
        for proc, conn in self._workers.values():
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
                clear_worker(proc.pid)
            conn.close()
        self._workers.clear()

    def stop(self) -> None:
        """End every worker now (an interrupted run: do not wait for running notebooks)."""
        pids = [proc.pid for proc, _ in self._workers.values()]
        below = [child for pid in pids for child in descendants(pid)]   # bubblewrap, its kernels
        for proc, _ in self._workers.values():
            proc.kill()
        for pid in below:           # bubblewrap outlives a killed worker until its sandbox ends
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self.close()
        for pid in pids:
            clear_worker(pid)


def clear_worker(pid: int) -> None:
    """What a killed worker's kernels and judge left, should any have outlived their sandbox: processes, control
    groups, answer-socket folders."""
    clear_uid_block(pid)
    remove_block_groups(uid_block(pid), UIDS_PER_PROCESS)
    for folder in Path(tempfile.gettempdir()).glob(answers_prefix(pid) + "*"):
        shutil.rmtree(folder, ignore_errors=True)      # root's own folder: rmtree follows no link in it


STOP = "stop"                       # on_result's answer: start no more jobs


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


if __name__ == "__main__":
    _worker_main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
