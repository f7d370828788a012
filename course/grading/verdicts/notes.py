"""What the course's own code in the sandbox tells the judge while a test runs: a one-way pipe.

A test that traps a file (helpers.probes_serialization.payload_runs) needs to know whether a student's loader
ran the file's payload, in the kernel or in any process the kernel started. Nothing kept in the sandbox can
say so: the student's code can reset a flag, delete a file, kill a process or flood a channel it shares.
So the grader makes a FIFO in its answer folder (the kernel sees the folder read-only and the FIFO
write-only: mode 0622, the grader's own), and the judge reads it while the test runs:

- the payload writes its token there the moment it runs, one short line (atomic: under PIPE_BUF);
- a thread of the judge drains the pipe all the time, so a pipe filled beforehand cannot block the write;
- the judge keeps only the tokens it is waiting for (`expect`), so a flood of lines costs it no memory
  and cannot push a real token out;
- a line, once written, is out of the sandbox: no code there can read it back.
"""

from __future__ import annotations

import os
import select
import stat
import threading
from pathlib import Path

FIFO_NAME = "n"             # in the answer folder, beside the answer socket
LINE_BYTES = 256            # a line longer than this is no token: skipped to its end


def make_fifo(folder: Path) -> Path:
    """The notes FIFO in `folder` (the grader's answer folder), write-only for everyone else."""
    path = folder / FIFO_NAME
    if not (path.exists() and stat.S_ISFIFO(path.lstat().st_mode)):
        path.unlink(missing_ok=True)
        os.mkfifo(path)
    os.chmod(path, 0o622)
    return path


def open_reader(path: Path) -> int:
    """A read end of the FIFO that never blocks (a writer may come at any time, or never)."""
    return os.open(path, os.O_RDONLY | os.O_NONBLOCK)


class Listener:
    """The judge's end of the pipe for one test: `path` where the sandbox writes (the FIFO's path as the kernel
    sees it), `expect(token)` before the code that may write it runs, `heard(token)` after."""

    def __init__(self, fd: int, path: str):
        self.fd, self.path = fd, path
        self._expected: set[str] = set()
        self._heard: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._drain, name="course-notes", daemon=True)
        self._thread.start()

    def expect(self, token: str) -> None:
        with self._lock:
            self._expected.add(token)

    def heard(self, token: str) -> bool:
        self._read_available()      # what was written before the call returned is in the pipe by now
        with self._lock:
            return token in self._heard

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        os.close(self.fd)

    def _drain(self) -> None:
        while not self._stop.is_set():
            try:
                ready = select.select([self.fd], [], [], 0.05)[0]
            except (OSError, ValueError):
                return
            if ready:
                self._read_available()

    _partial = b""

    def _read_available(self) -> None:
        with self._lock:
            while True:
                try:
                    chunk = os.read(self.fd, 1 << 16)
                except BlockingIOError:
                    return
                except OSError:
                    return
                if not chunk:
                    return      # no writer now; the FIFO stays open for the next one
                lines = (self._partial + chunk).split(b"\n")
                self._partial = lines.pop()
                if len(self._partial) > LINE_BYTES:
                    self._partial = b"\xff"         # a line too long for a token: whatever ends it is no token
                for line in lines:
                    token = line.decode("ascii", "replace")
                    if token in self._expected:
                        self._heard.add(token)
