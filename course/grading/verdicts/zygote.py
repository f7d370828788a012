"""The judge: the process that runs the course's test code, confined, and how the grader talks to it.

Three parties grade a notebook. The TA's process (`course.grading.worker`: nbgrader, the scratch gradebook,
the class folder) runs neither student code nor test code. The student's kernel runs the notebook
(`course.grading.sandbox`). The judge runs the test cells (`course.grading.verdicts.judge`) against what the kernel serves,
in a sandbox of its own: a uid of its own, no network, the system, the Python installation and the
`course` and `helpers` packages read-only, a capped memory-backed /tmp as its only writable place,
memory, process, file-size and open-file limits. It sees neither the class folder, nor the gradebook,
nor another submission, nor any path of the kernel's.

One judge process per worker (the *zygote*) imports torch and the test machinery once; for each
notebook it forks a child that keeps that notebook's test namespace and ends with it. The TA's
process talks to the child over a socket pair: a test's code and time go in, with the kernel's
connection as a file descriptor (SCM_RIGHTS: no path is shared); the verdict comes back as JSON,
size-capped and read with exact type checks, whatever the child says. A child that does not answer
in its time, or answers nonsense, is ended with its zygote: a failure of the grader's
(`JudgeFailed`), never a score.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from time import monotonic

from course.checkout import PACKAGE
from course.grading.sandbox.policy import Limits, MiB, Sandbox
from course.grading.sandbox.processes import clear_uid, end_sandbox

_FRAME = struct.Struct("!I")
MAX_VERDICT = 4 * MiB       # a verdict's JSON: a cell's printout is capped at 1 MiB, its message below
MAX_MESSAGE = 64 * 1024     # characters of a failing test's message kept (a huge repr is cut)
GRACE = 15                  # seconds a child may take beyond a test's time (its own work, the decoding)
CPU_SECONDS = 1800          # CPU seconds one notebook's judge may use in all (a notebook has 900 s of wall time)
START_TIMEOUT = 120         # seconds the zygote may take to import torch and the test machinery


class JudgeFailed(RuntimeError):
    """The judge could not start, died, or broke the protocol: the grader's failure, not the student's."""


# -- framing: 4-byte length + JSON, an fd travelling alone with one marker byte before its frame --------------

def send_frame(sock: socket.socket, value, fds: list[int] | None = None) -> None:
    if fds:
        socket.send_fds(sock, [b"F"], fds)
    data = json.dumps(value).encode()
    sock.sendall(_FRAME.pack(len(data)) + data)


def receive_frame(sock: socket.socket, limit: int, deadline: float | None = None, with_fds: int = 0):
    """(value, the fds that came with it: at most `with_fds`); EOFError at the end of the stream, JudgeFailed
    past `limit` or `deadline`."""
    fds: list[int] = []
    if with_fds:
        _wait(sock, deadline)
        marker, fds, _, _ = socket.recv_fds(sock, 1, with_fds)
        if not marker:
            raise EOFError("closed")
    size = _FRAME.unpack(_exactly(sock, _FRAME.size, deadline))[0]
    if size > limit:
        raise JudgeFailed(f"a message of {size} bytes, more than the {limit} allowed")
    try:
        return json.loads(_exactly(sock, size, deadline)), fds
    except ValueError:
        raise JudgeFailed("a message that is not JSON") from None


def _wait(sock: socket.socket, deadline: float | None) -> None:
    if deadline is not None:
        left = deadline - monotonic()
        if left <= 0 or not select.select([sock], [], [], left)[0]:
            raise JudgeFailed("no answer in time")


def _exactly(sock: socket.socket, n: int, deadline: float | None) -> bytes:
    chunks = []
    while n:
        _wait(sock, deadline)
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise EOFError("closed")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


# -- the grader's side -------------------------------------------------------------------------------------

def judge_limits(limits: Limits) -> Limits:
    """What the judge may use: the kernel's memory (it holds copies of what the kernel sends), few processes,
    small files, and a /tmp for the test's own files (checkpoints a test writes or receives)."""
    return replace(limits, processes=64, file_size=limits.tmp_size, open_files=256)


class JudgeServer:
    """The zygote of one worker, started in its sandbox on first use; `open_notebook` forks a child for a notebook."""

    def __init__(self, sandbox: Sandbox, threads: int):
        self.sandbox = sandbox.for_judge()          # a uid of its own, never a kernel's
        self.threads = threads
        self.proc: subprocess.Popen | None = None
        self.sock: socket.socket | None = None

    def start(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            return
        self.stop()
        mine, theirs = socket.socketpair()
        course_dir = str(PACKAGE)
        argv = [sys.executable, "-P", "-c", f"import sys; sys.path.insert(0, {str(Path(course_dir).parent)!r}); "
                f"from course.grading.verdicts.zygote import zygote; zygote({theirs.fileno()}, {self.threads})"]
        fonts = _matplotlib_cache()
        command = self.sandbox.judge_command(argv, (course_dir, *fonts), judge_limits(self.sandbox.limits),
                                             {"COURSE_MPL_SEED": fonts[0]} if fonts else {})
        try:
            self.proc = subprocess.Popen(command, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd="/")
        except OSError as error:
            raise JudgeFailed(f"the judge could not start: {error}") from None
        finally:
            theirs.close()
        self.sock = mine
        self.ready = False

    def open_notebook(self) -> "NotebookJudge":
        """A child of the zygote for one notebook's tests (the zygote starts now if it is not running). Raises
        JudgeFailed when the zygote does not say that it is ready (it could not start: the grader's failure)."""
        self.start()
        if not self.ready:
            try:
                _wait(self.sock, monotonic() + START_TIMEOUT)
                self.ready = self.sock.recv(1) == b"R"
            except (OSError, JudgeFailed):
                pass
            if not self.ready:
                self.stop(keep_said=True)
                raise JudgeFailed("the judge did not start" + (f": {self.last_said}" if self.last_said else ""))
        mine, theirs = socket.socketpair()
        try:
            socket.send_fds(self.sock, [b"N"], [theirs.fileno()])
        except OSError as error:
            self.stop()
            raise JudgeFailed(f"the judge is gone ({type(error).__name__})") from None
        finally:
            theirs.close()
        return NotebookJudge(mine, self)

    last_said = ""      # the last line a judge that could not start wrote on stderr

    def stop(self, keep_said: bool = False) -> None:
        """End the zygote and every child, with every process of its uid."""
        self.ready = False
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.proc is not None:
            if self.proc.poll() is None:
                if self.sandbox.isolated:
                    end_sandbox(self.proc.pid)
                self.proc.kill()
            self.proc.wait()
            if self.proc.stderr is not None:
                if keep_said:
                    lines = self.proc.stderr.read(1 << 16).decode(errors="replace").strip().splitlines()
                    self.last_said = lines[-1][:300] if lines else ""
                self.proc.stderr.close()
            self.proc = None
        if self.sandbox.uid is not None:
            clear_uid(self.sandbox.uid)


class NotebookJudge:
    """One notebook's child of the zygote, as the grader sees it."""

    def __init__(self, sock: socket.socket, server: JudgeServer):
        self.sock, self.server = sock, server

    def run(self, source: str, label: str, kernel: socket.socket, seconds: float, notes: tuple[int, str]):
        """Run test `source` in the judge against the kernel at the other end of `kernel`: (outputs, failure),
        as `course.grading.verdicts.judge.Judge.run` gives them; `notes`: the read end of the notes FIFO and its
        path (course.grading.verdicts.notes). Raises JudgeFailed when the judge fails."""
        deadline = monotonic() + seconds + GRACE
        try:
            send_frame(self.sock, {"source": source, "label": label, "seconds": seconds, "notes": notes[1]},
                       fds=[kernel.fileno(), notes[0]])
            reply, _ = receive_frame(self.sock, MAX_VERDICT, deadline)
            return _verdict(reply)
        except (OSError, EOFError, JudgeFailed) as error:
            self.server.stop()      # a child that broke its protocol goes with its zygote
            raise JudgeFailed(f"the judge failed during this test ({type(error).__name__}: {error})") from None

    def close(self) -> None:
        self.sock.close()       # the child ends at the end of its stream


def _verdict(reply):
    """The child's reply as outputs and a failure, from exactly the fields and types a verdict has."""
    from nbformat.notebooknode import NotebookNode

    from course.grading.contract import AnswerTimeout, KernelGone

    if type(reply) is not dict or type(reply.get("outputs")) is not list or len(reply["outputs"]) > 2:
        raise JudgeFailed("a verdict of the wrong form")
    outputs = []
    for out in reply["outputs"]:
        kind = out.get("output_type") if type(out) is dict else None
        if kind == "stream" and type(out.get("text")) is str:
            outputs.append(NotebookNode(output_type="stream", name="stdout", text=out["text"]))
        elif kind == "error" and type(out.get("ename")) is str and type(out.get("evalue")) is str \
                and type(out.get("traceback")) is list and all(type(line) is str for line in out["traceback"]):
            outputs.append(NotebookNode(output_type="error", ename=out["ename"][:200], evalue=out["evalue"],
                                        traceback=out["traceback"]))
        else:
            raise JudgeFailed("an output of the wrong form")
    failure = reply.get("failure")
    if failure is None:
        return outputs, None
    if type(failure) is list and len(failure) == 2 and failure[0] in ("timeout", "gone") and type(failure[1]) is str:
        return outputs, (AnswerTimeout if failure[0] == "timeout" else KernelGone)(failure[1][:1000])
    raise JudgeFailed("a failure of the wrong form")


def _matplotlib_cache() -> tuple[str, ...]:
    """The grader's matplotlib cache folder (its font list), which the judge copies instead of rebuilding it;
    none where it lies under /tmp (the judge's own /tmp would hide it)."""
    try:
        from matplotlib import get_cachedir
        folder = Path(get_cachedir()).resolve()
    except Exception:  # noqa: BLE001 - no matplotlib here: the judge builds its own when a test needs it
        return ()
    return (str(folder),) if folder.is_dir() and Path("/tmp") not in folder.parents else ()


# -- the judge's side (in its sandbox) ------------------------------------------------------------------------

def zygote(fd: int, threads: int) -> None:
    """Import everything a test needs, then fork a child for every notebook the grader opens."""
    sock = socket.socket(fileno=fd)
    _not_dumpable()
    _seed_matplotlib()
    os.environ.setdefault("MPLBACKEND", "Agg")
    import matplotlib.pyplot  # noqa: F401 - a plot check's import, once
    import torch

    _import_dynamo()
    import helpers.checks  # noqa: F401
    from course.grading.verdicts import judge as verdicts  # noqa: F401

    torch.set_num_threads(threads)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)        # children are reaped by the kernel
    sock.sendall(b"R")
    # What goes to stderr from now on (a library's warning on a test's data) is nobody's to read: the grader
    # reads this pipe only when the judge could not start, and a full pipe would block the judge.
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 2)
    os.close(quiet)
    while True:
        try:
            marker, fds, _, _ = socket.recv_fds(sock, 1, 4)
        except OSError:
            return
        if not marker:
            return
        if not fds:
            continue
        for extra in fds[1:]:
            os.close(extra)
        if os.fork() == 0:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            sock.close()
            try:
                _serve_notebook(socket.socket(fileno=fds[0]))
            finally:
                os._exit(0)
        os.close(fds[0])


def _serve_notebook(sock: socket.socket) -> None:
    """One notebook's tests, in order, in one namespace, until the grader closes the socket."""
    import resource
    import shutil

    from course.grading.verdicts.judge import Judge

    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))
    judge = Judge()
    try:
        _serve_tests(sock, judge)
    finally:
        shutil.rmtree(judge.files.root, ignore_errors=True)


def _serve_tests(sock: socket.socket, judge) -> None:
    from course.grading.verdicts.connection import AnswerTimeout, Connection
    from course.grading.verdicts.notes import Listener

    while True:
        try:
            request, fds = receive_frame(sock, 16 * MiB, with_fds=2)
        except EOFError:
            return
        if len(fds) != 2:       # not the grader's request: this notebook's judge ends
            for fd in fds:
                os.close(fd)
            return
        listener = Listener(fds[1], str(request["notes"]))
        try:
            with socket.socket(fileno=fds[0]) as kernel:
                outputs, failure = judge.run(request["source"], request["label"],
                                             Connection(kernel, monotonic() + float(request["seconds"]),
                                                        listener=listener))
        finally:
            listener.close()
        reply = {"outputs": [_capped(dict(out)) for out in outputs], "failure": None}
        if failure is not None:
            reply["failure"] = ["timeout" if isinstance(failure, AnswerTimeout) else "gone", str(failure)[:1000]]
        send_frame(sock, reply)


def _capped(output: dict) -> dict:
    if output.get("output_type") == "stream":
        output["text"] = utf8_prefix(output["text"], 1 << 20)
    else:
        output["evalue"] = _cut(output["evalue"])
        output["traceback"] = [_cut(line) for line in output["traceback"][:100]]
    return output


def utf8_prefix(text: str, limit: int) -> str:
    """The longest start of `text` that takes at most `limit` bytes in UTF-8 (caps are bytes of notebook)."""
    data = text.encode("utf-8", "surrogatepass")
    return text if len(data) <= limit else data[:limit].decode("utf-8", "ignore")


def _cut(text: str) -> str:
    kept = utf8_prefix(text, MAX_MESSAGE)
    return kept if kept == text else f"{kept} ... [{len(text) - len(kept)} more characters]"


def _not_dumpable() -> None:
    """Make this process and every child it forks undumpable: another process of the judge's uid (one a
    notebook's test code might leave running) can then neither read their memory (/proc/PID/mem), trace them,
    nor take their sockets (pidfd_getfd), so it cannot reach a later notebook's tests or the grader's socket."""
    import ctypes

    PR_SET_DUMPABLE = 4
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def _import_dynamo() -> None:
    """Import torch._dynamo (and sympy with it) once here, not in every child: the first optimizer a test builds
    imports it (`Optimizer.__init__`), and so does a test of any notebook through torch's symbolic shapes. It
    was most of a child's CPU time: 1.2 to 2.0 s of each notebook's, 0.2 to 1.1 s once imported here."""
    try:
        import torch._dynamo  # noqa: F401
    except (ImportError, RuntimeError):   # a torch without it on this Python: a test that needs it fails as it would
        pass


def _seed_matplotlib() -> None:
    """Copy the grader's font list into the judge's own config folder (its cache folder is read-only here):
    without it, the first plot check of every judge would rebuild matplotlib's font cache (seconds)."""
    import shutil

    seed = os.environ.get("COURSE_MPL_SEED")
    target = Path(os.environ.get("MPLCONFIGDIR") or "/tmp/.matplotlib")
    if seed and Path(seed).is_dir():
        target.mkdir(parents=True, exist_ok=True)
        for font_list in Path(seed).glob("fontlist-*.json"):
            shutil.copy2(font_list, target / font_list.name)


_JUDGES: dict[str, JudgeServer] = {}     # this process's judge, for each sandbox it grades in


def judge_for(sandbox: Sandbox) -> JudgeServer:
    """The judge of this worker process for `sandbox` (one zygote serves every notebook the worker grades)."""
    key = sandbox.to_json()
    if key not in _JUDGES:
        threads = int(dict(sandbox.env).get("OMP_NUM_THREADS", "1"))
        _JUDGES[key] = JudgeServer(sandbox, threads)
    return _JUDGES[key]
