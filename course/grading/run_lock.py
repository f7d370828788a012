"""One `course grade` run per class folder at a time: a second run (two TAs, or one TA twice) refuses at once with
a message that names the first, where it would otherwise stop in nbgrader's registration with a traceback or race
the first for the same gradebook and done-markers. An advisory lock (flock) on a file in the class folder's state
folder: the kernel lets it go when the run's process ends, however it ends."""

from __future__ import annotations

import fcntl
import os
import socket
import time
from contextlib import contextmanager
from pathlib import Path

from course.grading.contract import GradingStopped, printable
from course.notebook.classdir import ClassDir


@contextmanager
def one_run_at_a_time(class_dir: Path):
    """Hold the class folder's run lock for the block; GradingStopped, naming the holder, when another run has it."""
    state = ClassDir(class_dir).state
    state.mkdir(exist_ok=True)
    fd = os.open(state / "run.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = printable(os.pread(fd, 200, 0).decode("utf-8", "replace").strip()) or "a process"
            raise GradingStopped(f"another `course grade` run is grading this class folder ({holder}): wait for it "
                                 f"to end (or stop it), then run again; nothing was graded by this one") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}, started "
                      f"{time.strftime('%Y-%m-%d %H:%M:%S')}".encode(), 0)
        yield
    finally:
        os.close(fd)
