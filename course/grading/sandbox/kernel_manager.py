"""The kernel manager that starts a student kernel in its sandbox, and the files it gets."""

from __future__ import annotations

import functools
import os
import shutil
import stat
from pathlib import Path

import zmq
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from traitlets import default

from course.grading.sandbox.host import (
    RUN_SIZE,
    capped_folder,
    control_groups,
    join_groups,
    remove_groups,
)
from course.grading.sandbox.policy import MiB, Sandbox
from course.grading.sandbox.processes import clear_uid, end_sandbox

# The largest message the grader takes from a kernel. jupyter_client reads a whole message into memory
# before the output cap (GuardedExecute.output) sees it: a kernel could make the TA's process hold many
# times its own memory limit. ZeroMQ drops a larger message at the socket (and the connection with it):
# that cell's output is lost, the student's doing.
MAX_KERNEL_MESSAGE = 32 * MiB


class CappedKernelClient(AsyncKernelClient):
    """A kernel client whose sockets refuse messages over MAX_KERNEL_MESSAGE."""

    def _create_connected_socket(self, channel, identity=None):
        # A default of the context: it must be set before the socket connects.
        self.context.setsockopt(zmq.MAXMSGSIZE, MAX_KERNEL_MESSAGE)
        return super()._create_connected_socket(channel, identity)


_MEMORY_HISTORY = "--HistoryManager.hist_file=:memory:"
_CWD_LAST_IGNORE = "--IPKernelApp.ignore_cwd=True"
_CWD_LAST_APPEND = ("--IPKernelApp.exec_lines=import sys\ntry:\n    import helpers\nexcept ImportError:\n    pass\n"
                    "sys.path.append('')")


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel manager that starts its kernel inside `sandbox`, talking over unix sockets.

    Use `kernel_manager_for` to get a subclass bound to one sandbox and scratch folder.
    """

    sandbox: Sandbox
    scratch: Path
    answers: Path | None = None     # the answer socket's folder (course.grading.execute), bound read-only

    @default("client_factory")
    def _capped_client(self):
        return CappedKernelClient

    def __init__(self, **kwargs):
        rundir = self.scratch / "run"
        rundir.mkdir(parents=True, exist_ok=True)
        capped_folder(rundir, RUN_SIZE)     # the kernel writes its sockets there: and nothing much else
        kwargs.setdefault("transport", "ipc")
        kwargs.setdefault("ip", str(rundir / "k"))
        kwargs.setdefault("connection_file", str(rundir / "kernel.json"))
        super().__init__(**kwargs)

    @property
    def kernel_spec(self):
        spec = super().kernel_spec
        # Interrupt through a control message, not SIGINT to the process group: the group
        # is bubblewrap's, which a signal would kill rather than interrupt.
        if spec is not None:
            spec.interrupt_mode = "message"
        return spec

    def format_kernel_cmd(self, extra_arguments=None) -> list[str]:
        # History in memory only: a history file would keep every executed test cell, hidden
        # tests included, where a later student cell could read it.
        argv = super().format_kernel_cmd(extra_arguments)
        argv += [] if _MEMORY_HISTORY in argv else [_MEMORY_HISTORY]
        # `python -m ipykernel_launcher` would look for the launcher in the working folder first,
        # that is in the submission: -P (safe path) keeps a student's ipykernel_launcher.py from
        # running as the kernel, before any cell and outside every check. IPython still puts the
        # working folder on sys.path for the notebook's own imports.
        if len(argv) > 2 and argv[1] == "-m" and Path(argv[0]).name.startswith("python"):
            argv.insert(1, "-P")
        # IPython would put the working folder before site-packages, where a submission's own
        # helpers/ or torch/ would stand in for the course's (an editable install's finder comes
        # after every sys.path entry, so `helpers` is imported before the folder is added): the
        # notebook's own modules still import, from the end of sys.path.
        argv += [_CWD_LAST_IGNORE, _CWD_LAST_APPEND]
        # The kernel works in a copy of the notebook's folder without the notebooks, never in
        # the folder nbgrader reads and writes: a link planted there would make the grader
        # (perhaps root) write through it, and the notebook being graded holds the hidden tests.
        notebook_dir = Path(self._launch_args.get("cwd") or os.getcwd()).resolve()
        workdir = self.scratch / "work"
        if workdir.exists():
            shutil.rmtree(workdir)
        copy_regular(notebook_dir, workdir, skip=("*.ipynb",))
        home = self.scratch / "home"
        home.mkdir(exist_ok=True)
        _seed_matplotlib_cache(home)
        rundir = Path(self.connection_file).parent
        self.kernel_sandbox = self.sandbox.for_kernel()     # a fresh uid for every kernel, restarts too
        self.kernel_sandbox.give(workdir, home, rundir)
        return self.kernel_sandbox.command(argv, workdir, home, rundir, self.answers)

    # How many processes besides the kernel its sandbox still held when the kernel was
    # ended (None: it ended by itself, and its sandbox with it).
    left_running: int | None = None

    async def _async_kill_kernel(self, restart: bool = False) -> None:
        launcher = getattr(self.provisioner, "pid", None) if self.has_kernel else None
        if launcher and self.sandbox.isolated:
            self.left_running = end_sandbox(launcher)
        await super()._async_kill_kernel(restart=restart)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        sandbox = getattr(self, "kernel_sandbox", None)
        if sandbox is not None and sandbox.uid is not None:
            clear_uid(sandbox.uid)
        remove_groups(getattr(self, "control_groups", []))

    cleanup_resources = _async_cleanup_resources    # jupyter_client binds the public name to its own
    async def _async_launch_kernel(self, kernel_cmd, **kw):
        # What the kernel and bubblewrap print goes to a log next to its sockets, not to the
        # TA's terminal (ipykernel greets every kernel with a paragraph on stderr).
        log = open(self.scratch / "kernel.log", "ab")   # noqa: SIM115 - the kernel holds it open
        kw["cwd"] = str(self.scratch / "work")      # see format_kernel_cmd (also without bubblewrap)
        sandbox = getattr(self, "kernel_sandbox", None)
        self.control_groups = (control_groups(str(sandbox.uid), sandbox.limits.total_memory())
                               if sandbox is not None and sandbox.uid is not None else [])
        if self.control_groups:
            kw["preexec_fn"] = functools.partial(join_groups, self.control_groups)
        kw.setdefault("stdout", log)
        kw.setdefault("stderr", log)
        try:
            return await super()._async_launch_kernel(kernel_cmd, **kw)
        finally:
            log.close()     # the kernel has its own copy of the descriptor


def copy_regular(src: Path, dst: Path, skip: tuple[str, ...] = ()) -> list[str]:
    """Copy the regular files and folders of `src` (but names matching `skip`) to `dst`;
    never follow a link a student planted. Returns what was left out for being a link or special file."""
    skipped = []
    dst.mkdir(parents=True, exist_ok=True)
    for folder, dirs, files in os.walk(src, followlinks=False):
        rel = Path(folder).relative_to(src)
        for name in list(dirs):
            if (Path(folder) / name).is_symlink():
                dirs.remove(name)
                skipped.append(str(rel / name))
            else:
                (dst / rel / name).mkdir(exist_ok=True)
        for name in files:
            path = Path(folder) / name
            if any(path.match(pattern) for pattern in skip):
                continue
            if stat.S_ISREG(path.lstat().st_mode):
                shutil.copy2(path, dst / rel / name, follow_symlinks=False)
            else:
                skipped.append(str(rel / name))
    return skipped


def kernel_manager_for(sandbox: Sandbox, scratch: Path, answers: Path | None = None) -> type[SandboxedKernelManager]:
    return type("BoundSandboxedKernelManager", (SandboxedKernelManager,),
                {"sandbox": sandbox, "scratch": scratch, "answers": answers})


_MPL_CACHE: list[Path | None] = []


def _seed_matplotlib_cache(home: Path) -> None:
    """Copy the grader's matplotlib font list into the kernel's fresh home.

    Without it every kernel that imports matplotlib rebuilds the font cache (seconds each).
    """
    if not _MPL_CACHE:
        try:
            from matplotlib import get_cachedir
            _MPL_CACHE.append(Path(get_cachedir()))
        except Exception:  # matplotlib missing or unusable: the kernel builds its own
            _MPL_CACHE.append(None)
    source = _MPL_CACHE[0]
    if source is None or not source.is_dir():
        return
    target = home / ".config" / "matplotlib"
    target.mkdir(parents=True, exist_ok=True)
    for font_list in source.glob("fontlist-*.json"):
        shutil.copy2(font_list, target / font_list.name)


# -- a writable folder of the kernel on the host, capped ------------------------------------------------

# The kernel's socket folder (ZeroMQ's ipc sockets: the one folder of the host it writes to) is a
# memory-backed mount of this size where the worker has a mount namespace of its own.
