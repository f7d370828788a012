"""The sandbox every student kernel runs in: bubblewrap namespaces plus resource limits.

What a student kernel sees and may do:

- the file system: the system's /usr and /etc, the Python installation, the `helpers`
  package, read-only; its working folder (what the notebook's folder holds besides the
  notebooks), a home and /tmp, each a memory-backed file system of `Limits.tmp_size`,
  so that a student filling them takes at most that much of the machine's memory and
  none of its disk, and nothing written there outlives the kernel. The course's source/, notebooks/, the
  gradebook, the grader's own code and other students' submissions are simply not there;
- no network (a network namespace with only a loopback device), its own process ids;
- rlimits: memory (address space that can be written: RLIMIT_DATA), processes and
  threads (RLIMIT_NPROC), file size, open files, no core dumps.

RLIMIT_NPROC never applies to root, so when the grader runs as root the kernel is
started as an unprivileged uid of its own: a fresh one for every kernel (from a block of
uids that belongs to the worker process), so that processes a submission leaves behind
never count against the next kernel's process cap, and a fork bomb in one sandbox cannot
starve another, in this run or in another run on the machine. `no_new_privs` keeps
setuid programs from giving anything back.

No trace of one kernel reaches the next: when a kernel ends, the grader kills pid 1 of
its pid namespace, which takes every process of the sandbox with it (the kernel's
children, double forks and `setsid` escapes included), waits until bubblewrap reports
that the namespace is empty, and then kills whatever still runs under the kernel's uid
and waits until none is left (`end_sandbox`, `clear_uid`). Its /tmp, home and working
folder are memory-backed mounts of that namespace and go with it.

The kernel talks to the grader over unix sockets (ZeroMQ's ipc transport) in a folder
bound into the sandbox, because a TCP port on the host's loopback is unreachable from
a separate network namespace.
"""

from __future__ import annotations

import functools
import glob
import importlib.util
import itertools
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager

GiB = 1 << 30
MiB = 1 << 20

# Runs inside the sandbox, before the kernel: set the limits, drop to the sandbox uid,
# forbid privilege gains, fill the empty working folder and home from their read-only
# seeds, then become the kernel. Plain Python so that it needs nothing beyond the
# interpreter the kernel uses anyway.
_LIMITER = """\
import ctypes, json, os, resource, shutil, sys
spec = json.loads(sys.argv[1])
for name, value in spec["rlimits"].items():
    resource.setrlimit(getattr(resource, name), (value, value))
if spec.get("uid") is not None:
    os.setgroups([])
    os.setgid(spec["gid"])
    os.setuid(spec["uid"])
ctypes.CDLL(None, use_errno=True).prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
for seed, target in spec.get("seeds", []):     # entry by entry: the mount point itself is not ours
    for name in os.listdir(seed):
        src, dst = os.path.join(seed, name), os.path.join(target, name)
        if os.path.isdir(src) and not os.path.islink(src):
            shutil.copytree(src, dst, symlinks=True)
        else:
            shutil.copy2(src, dst, follow_symlinks=False)
os.execv(sys.argv[2], sys.argv[2:])
"""
# Where the read-only seeds of the working folder and home appear in the sandbox.
SEED_DIR = "/.course-seed"

# Sandboxed kernels run, when the grader runs as root, as a uid from the block
# SANDBOX_UID_BASE + pid * UIDS_PER_PROCESS of the process that starts them, a new one for
# every kernel: the process limit counts every process of a uid, so no two live kernels (of
# this run or of another grading run on the machine) may share one. Far above the ranges
# distributions give to people and services; the largest pid (2**22) keeps the block below
# the largest uid.
SANDBOX_UID_BASE = 2_000_000_000
UIDS_PER_PROCESS = 512
_kernels_started = itertools.count()


def uid_block(pid: int) -> int:
    """The first of the uids that kernels started by process `pid` run as."""
    return SANDBOX_UID_BASE + pid * UIDS_PER_PROCESS


class SandboxUnavailable(RuntimeError):
    """No sandbox can be set up on this machine; the message says why."""


@dataclass(frozen=True)
class Limits:
    """What one student notebook may use. Times in seconds, sizes in bytes."""

    memory: int = 2 * GiB           # per process: RLIMIT_DATA (heap and private mappings)
    processes: int = 256            # processes and threads (RLIMIT_NPROC)
    file_size: int = 1 * GiB        # largest file the kernel may write
    open_files: int = 1024
    tmp_size: int = 256 * MiB       # each of the kernel's /tmp, /dev/shm, working folder and home (memory-backed)
    cell_timeout: int | None = None     # None: nbgrader's Execute.timeout (nbgrader_config.py)
    notebook_timeout: int = 900     # all cells of one notebook together
    output_per_cell: int = 1 * MiB  # outputs beyond this are dropped from the autograded notebook

    def rlimits(self) -> dict[str, int]:
        return {"RLIMIT_DATA": self.memory, "RLIMIT_NPROC": self.processes,
                "RLIMIT_FSIZE": self.file_size, "RLIMIT_NOFILE": self.open_files, "RLIMIT_CORE": 0}


@dataclass(frozen=True)
class Sandbox:
    """How to start a kernel: inside bubblewrap (`bwrap` set) or, when a TA allowed it, without."""

    bwrap: str | None
    limits: Limits = field(default_factory=Limits)
    readonly: tuple[str, ...] = ()      # host paths the kernel may read (bound at the same path)
    uid: int | None = None              # drop to this uid inside (grader running as root)
    env: tuple[tuple[str, str], ...] = ()

    @property
    def isolated(self) -> bool:
        return self.bwrap is not None

    def for_worker(self, slot: int, threads: int) -> "Sandbox":
        """This sandbox as the worker process in `slot` uses it: its block of uids (as root) and its share of the cores."""
        uid = uid_block(os.getpid()) if self.isolated and os.geteuid() == 0 else None
        env = dict(self.env) | {"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
        return replace(self, uid=uid, env=tuple(sorted(env.items())))

    def for_kernel(self) -> "Sandbox":
        """This sandbox for one kernel: the next uid of the worker's block (as root)."""
        if self.uid is None:
            return self
        return replace(self, uid=self._block() + next(_kernels_started) % (UIDS_PER_PROCESS - 1))

    def for_judge(self) -> "Sandbox":
        """This sandbox for the worker's judge (course.grading.verdicts.zygote): the last uid of the worker's block, never a kernel's."""
        return self if self.uid is None else replace(self, uid=self._block() + UIDS_PER_PROCESS - 1)

    def _block(self) -> int:
        return self.uid - (self.uid - SANDBOX_UID_BASE) % UIDS_PER_PROCESS

    def to_json(self) -> str:
        data = {"bwrap": self.bwrap, "limits": self.limits.__dict__, "readonly": list(self.readonly),
                "uid": self.uid, "env": [list(kv) for kv in self.env]}
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> "Sandbox":
        data = json.loads(text)
        return cls(bwrap=data["bwrap"], limits=Limits(**data["limits"]), readonly=tuple(data["readonly"]),
                   uid=data["uid"], env=tuple(tuple(kv) for kv in data["env"]))

    # -- the command ---------------------------------------------------------------------

    def command(self, kernel_argv: list[str], workdir: Path, home: Path, rundir: Path,
                answers: Path | None = None) -> list[str]:
        """The command line that starts `kernel_argv` in this sandbox, working in `workdir`; `answers`, a folder
        the grader alone writes (the answer socket's), is bound read-only at its own path."""
        spec = {"rlimits": self.limits.rlimits(), "uid": self.uid, "gid": self.uid}
        if not self.isolated:
            return [sys.executable, "-c", _LIMITER, json.dumps(spec), *kernel_argv]
        # The working folder and home are size-capped tmpfs mounts at their host paths,
        # filled at start from the host folders, which are bound read-only elsewhere.
        seeds = [(f"{SEED_DIR}/{i}", str(path)) for i, path in enumerate((workdir, home))]
        spec["seeds"] = seeds
        limited = [sys.executable, "-c", _LIMITER, json.dumps(spec), *kernel_argv]
        env = {"HOME": str(home), "MPLCONFIGDIR": str(home / ".config" / "matplotlib")}
        made: set[str] = set()
        args = self._isolation(self.readonly, made)
        for (seed, path), source in zip(seeds, (workdir, home)):
            args += _parents(seed, made) + ["--ro-bind", str(source), seed]
            args += _parents(path, made) + ["--perms", "1777", "--size", str(self.limits.tmp_size), "--tmpfs", path]
        args += _parents(str(rundir), made) + ["--bind", str(rundir), str(rundir)]
        if answers is not None:
            args += _parents(str(answers), made) + ["--ro-bind", str(answers), str(answers)]
        return args + self._finish(workdir, env, limited)

    def judge_command(self, argv: list[str], readonly: tuple[str, ...], limits: "Limits",
                      env: dict[str, str] | None = None) -> list[str]:
        """The command line that starts the judge (course.grading.verdicts.zygote) in a sandbox of its own: this sandbox's system,
        Python and `helpers`, plus `readonly` (the `course` package), a capped /tmp as its only writable place,
        `limits`' rlimits, and no path of a kernel's or of the class's."""
        spec = {"rlimits": limits.rlimits(), "uid": self.uid, "gid": self.uid}
        limited = [sys.executable, "-c", _LIMITER, json.dumps(spec), *argv]
        if not self.isolated:
            return limited
        made: set[str] = set()
        args = self._isolation(tuple(dict.fromkeys(self.readonly + readonly)), made, tmp_size=limits.tmp_size)
        env = {"HOME": "/tmp", "MPLCONFIGDIR": "/tmp/.matplotlib"} | (env or {})
        return args + self._finish(Path("/tmp"), env, limited)

    def _isolation(self, readonly: tuple[str, ...], made: set[str], tmp_size: int | None = None) -> list[str]:
        """bubblewrap's namespaces, the system and `readonly` bound read-only, a capped /tmp and /dev/shm."""
        size = str(tmp_size or self.limits.tmp_size)
        args = [self.bwrap, "--die-with-parent", "--new-session",
                "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                "--hostname", "sandbox"]
        if self.uid is None:
            # Not root: an unprivileged user namespace, and none may be nested in it.
            args += ["--unshare-user", "--disable-userns"]
        else:
            # Root: the limiter needs these two to become the sandbox uid, then has none.
            args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        args += _system_binds()
        # The sandbox's own /tmp first, the read-only binds after: a Python environment that
        # lives under /tmp must appear inside it, not be hidden by it.
        args += ["--proc", "/proc", "--dev", "/dev",
                 "--perms", "1777", "--size", size, "--tmpfs", "/tmp",
                 "--perms", "1777", "--size", size, "--tmpfs", "/dev/shm"]
        args += _gpu_binds()
        for path in readonly:
            args += _parents(path, made) + ["--ro-bind", path, path]
        return args

    def _finish(self, workdir: Path, env: dict[str, str], limited: list[str]) -> list[str]:
        env = {"PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
               "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": "/tmp",
               "USER": "student", "LOGNAME": "student"} | env | dict(self.env)
        args = ["--remount-ro", "/", "--chdir", str(workdir), "--clearenv"]
        for key, value in sorted(env.items()):
            args += ["--setenv", key, value]
        return args + ["--", *limited]

    def give(self, *paths: Path) -> None:
        """Hand `paths` (recursively) to the sandbox uid, so that the kernel may write there."""
        if self.uid is None:
            return
        for top in paths:
            for folder, dirs, files in os.walk(top):
                for name in [folder, *(os.path.join(folder, f) for f in dirs + files)]:
                    os.lchown(name, self.uid, self.uid)


def _system_binds() -> list[str]:
    """/usr, /etc and the top-level links or folders of a merged-/usr or classic layout."""
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    return args


def _gpu_binds() -> list[str]:
    """The NVIDIA device nodes a CUDA program opens, where the machine has them: a kernel on a GPU grading host
    gets the GPU, and the judge sees the same devices as the kernel (a test that asks `torch.cuda.is_available()`
    then calls the student's code with a device the kernel has)."""
    return [arg for node in sorted(glob.glob("/dev/nvidia*")) if os.path.exists(node)
            for arg in ("--dev-bind", node, node)]


def _parents(path: str, made: set[str]) -> list[str]:
    """Create the parents of a bind target world-traversable (bwrap would make them 0700)."""
    args = []
    parts = Path(path).parts
    for i in range(2, len(parts)):
        parent = str(Path(*parts[:i]))
        if parent not in made and parent not in ("/usr", "/etc", "/tmp"):
            made.add(parent)
            args += ["--perms", "0755", "--dir", parent]
    return args


# -- what the kernel may read ----------------------------------------------------------------

def kernel_readonly_paths(hidden: list[Path]) -> tuple[str, ...]:
    """The Python installation and the `helpers` package, minus anything that would show `hidden`.

    `hidden` are the folders a student must not see (the course checkout, the class folder);
    a Python environment inside one of them (a .venv) is still fine, the rest of it is not.
    """
    hidden = [h.resolve() for h in hidden]
    candidates = {Path(p).resolve() for p in (sys.base_prefix, sys.prefix, sys.exec_prefix, sys.base_exec_prefix)}
    prefixes = set(candidates)
    for entry in sys.path:
        if entry and Path(entry).is_dir():
            candidates.add(Path(entry).resolve())
    helpers = _helpers_locations()
    candidates |= helpers
    prefixes |= helpers
    chosen: list[Path] = []
    for path in sorted(candidates):     # parents sort before their children
        if path == Path("/") or _under_system(path) or any(c == path or c in path.parents for c in chosen):
            continue        # /usr is bound anyway; or bound already through a parent
        if any(path == h or path in h.parents for h in hidden):
            continue        # it would contain a hidden folder
        if any(h in path.parents for h in hidden) and path not in prefixes:
            continue        # inside a hidden folder and not part of the Python installation
        chosen.append(path)
    return tuple(str(p) for p in chosen)


def _helpers_locations() -> set[Path]:
    """Where `import helpers` finds the package: here, and in a Python started elsewhere, as the
    kernel is (here the current folder may hold a checkout that the installed package is not)."""
    found = set()
    spec = importlib.util.find_spec("helpers")
    if spec is not None and spec.submodule_search_locations:
        found |= {Path(p).resolve() for p in spec.submodule_search_locations}
    probe = ("import importlib.util, json; s = importlib.util.find_spec('helpers'); "
             "print(json.dumps(list(s.submodule_search_locations or []) if s else []))")
    try:
        out = subprocess.run([sys.executable, "-c", probe], cwd="/", capture_output=True, text=True, timeout=60)
        found |= {Path(p).resolve() for p in json.loads(out.stdout or "[]")}
    except (OSError, ValueError, subprocess.TimeoutExpired):
        pass
    return found


def _under_system(path: Path) -> bool:
    return path == Path("/usr") or Path("/usr") in path.parents


# -- finding and probing -----------------------------------------------------------------------

def find_bwrap() -> str | None:
    """The bubblewrap binary: $COURSE_BWRAP if set (tests use it to simulate a missing one), else PATH."""
    configured = os.environ.get("COURSE_BWRAP")
    if configured is not None:
        return configured if configured and os.access(configured, os.X_OK) else None
    return shutil.which("bwrap")


def probe(sandbox: Sandbox) -> None:
    """Start a Python in `sandbox` once; raise SandboxUnavailable with the reason if it cannot."""
    if not sandbox.isolated:
        return
    with tempfile.TemporaryDirectory(prefix="course-sandbox-probe-") as tmp:
        dirs = [Path(tmp) / name for name in ("work", "home", "run")]
        for d in dirs:
            d.mkdir()
        trial = sandbox.for_worker(0, 1)
        trial.give(*dirs)
        code = ("import socket, os\n"
                "try:\n    socket.create_connection(('192.0.2.1', 9), timeout=1)\nexcept OSError:\n    pass\n"
                "else:\n    raise SystemExit('the network is reachable')\n"
                "print('sandbox ok', os.getuid())")
        cmd = trial.command([sys.executable, "-c", code], *dirs)
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise SandboxUnavailable(f"{sandbox.bwrap} could not start: {error}") from None
        if proc.returncode != 0 or "sandbox ok" not in proc.stdout:
            detail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
            raise SandboxUnavailable(f"bubblewrap could not create the sandbox here (exit {proc.returncode}): "
                                     f"{detail[-1] if detail else 'no message'}")


def make_sandbox(hidden: list[Path], limits: Limits, allow_unsandboxed: bool) -> tuple[Sandbox, str | None]:
    """The sandbox to grade with, and why it is not isolated (None when it is).

    Raises SandboxUnavailable when no sandbox can be set up and the TA did not allow that.
    """
    readonly = kernel_readonly_paths(hidden)
    bwrap = find_bwrap()
    if bwrap is None:
        reason = "bubblewrap (bwrap) is not installed; on Debian or Ubuntu: apt-get install bubblewrap"
    else:
        sandbox = Sandbox(bwrap=bwrap, limits=limits, readonly=readonly)
        try:
            probe(sandbox)
            return sandbox, None
        except SandboxUnavailable as error:
            reason = str(error)
    if not allow_unsandboxed:
        raise SandboxUnavailable(reason)
    return Sandbox(bwrap=None, limits=limits, readonly=readonly), reason


# -- the kernel manager ----------------------------------------------------------------------

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
        remove_group(getattr(self, "cpu_group", None))

    cleanup_resources = _async_cleanup_resources    # jupyter_client binds the public name to its own
    async def _async_launch_kernel(self, kernel_cmd, **kw):
        # What the kernel and bubblewrap print goes to a log next to its sockets, not to the
        # TA's terminal (ipykernel greets every kernel with a paragraph on stderr).
        log = open(self.scratch / "kernel.log", "ab")   # noqa: SIM115 - the kernel holds it open
        kw["cwd"] = str(self.scratch / "work")      # see format_kernel_cmd (also without bubblewrap)
        sandbox = getattr(self, "kernel_sandbox", None)
        self.cpu_group = cpu_group(str(sandbox.uid)) if sandbox is not None and sandbox.uid is not None else None
        if self.cpu_group is not None:
            kw["preexec_fn"] = functools.partial(join_group, self.cpu_group)
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
RUN_SIZE = 1 * MiB
_CLONE_NEWNS, _MS_REC, _MS_PRIVATE, _MNT_DETACH = 0x00020000, 0x4000, 0x40000, 2
_PRIVATE_MOUNTS: list[bool] = [False]


def private_mounts() -> bool:
    """Give this process (a grading worker, before it starts threads) a mount namespace of its own, in which
    `capped_folder` mounts are private and end with the worker. Only as root; False where it cannot."""
    if os.geteuid() != 0 or sys.platform != "linux":
        return False
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(_CLONE_NEWNS) != 0 or libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        return False
    _PRIVATE_MOUNTS[0] = True
    return True


def capped_folder(path: Path, size: int) -> bool:
    """Make `path` a memory-backed file system of `size` bytes (in this worker's own mount namespace)."""
    if not _PRIVATE_MOUNTS[0] or os.path.ismount(path):
        return _PRIVATE_MOUNTS[0]
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    options = f"size={size},nr_inodes=256,mode=0755".encode()
    return libc.mount(b"tmpfs", str(path).encode(), b"tmpfs", 0x2 | 0x4 | 0x8, options) == 0   # nosuid,nodev,noexec


def release_folder(path: Path) -> None:
    """Undo `capped_folder` (what the kernel wrote there goes with it)."""
    if _PRIVATE_MOUNTS[0] and os.path.ismount(path):
        import ctypes

        ctypes.CDLL(None, use_errno=True).umount2(str(path).encode(), _MNT_DETACH)


# -- a fair share of the CPU for every kernel ---------------------------------------------------------------

def _cpu_hierarchy() -> Path | None:
    """Where this machine's CPU controller can be given groups: a cgroup v1 `cpu` hierarchy, or the cgroup v2
    root with `cpu` in its controllers. None where there is none, or it is not ours to write (not root)."""
    if os.geteuid() != 0 or sys.platform != "linux":
        return None
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return None
    for line in mounts:
        fields = line.split()
        if len(fields) > 3 and fields[2] == "cgroup" and "cpu" in fields[3].split(","):
            return Path(fields[1])
    for line in mounts:
        fields = line.split()
        if len(fields) > 2 and fields[2] == "cgroup2":
            root = Path(fields[1])
            try:
                if "cpu" in (root / "cgroup.controllers").read_text().split() and \
                        "cpu" in (root / "cgroup.subtree_control").read_text().split():
                    return root
            except OSError:
                pass
    return None


_CPU_ROOT: list = []


def cpu_group(name: str) -> Path | None:
    """A CPU control group of its own for one kernel, `name` (its uid): the scheduler shares the CPU equally
    between groups, so a kernel's hundred busy processes take no more than its share from the kernel graded
    beside it. None where the machine gives no such group (the kernel then shares the worker's)."""
    if not _CPU_ROOT:
        _CPU_ROOT.append(_cpu_hierarchy())
    if _CPU_ROOT[0] is None:
        return None
    group = _CPU_ROOT[0] / "course-grade" / name
    try:
        group.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return group if (group / "cgroup.procs").exists() else None


def join_group(group: Path) -> None:
    """Move the calling process into `group` (run in the launcher between fork and exec: its children follow)."""
    fd = os.open(str(group / "cgroup.procs"), os.O_WRONLY)
    try:
        os.write(fd, str(os.getpid()).encode())
    finally:
        os.close(fd)


def remove_group(group: Path | None) -> None:
    """Remove a kernel's group once its processes are gone (an empty group is removed with rmdir)."""
    if group is not None:
        try:
            group.rmdir()
        except OSError:
            pass


# -- the processes of one sandbox ---------------------------------------------------------------

def _process_table() -> dict[int, tuple[int, int, str, str]]:
    """{pid: (parent pid, start time, command line, state)} of every process we may look at."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        table[int(entry)] = (int(fields[1]), int(fields[19]), cmdline, fields[0])
    return table


def stray_processes(launcher: int) -> list[int]:
    """Processes started under `launcher` (the kernel's launcher) other than the kernel itself.

    A fork bomb's children are copies of the kernel that hold its sockets and the process
    budget; the kernel is the oldest, shallowest `ipykernel` under the launcher.
    """
    table = _process_table()
    children: dict[int, list[int]] = {}
    for pid, (ppid, *_) in table.items():
        children.setdefault(ppid, []).append(pid)
    depth, order = {launcher: 0}, [launcher]
    for pid in order:
        for child in children.get(pid, []):
            depth[child] = depth[pid] + 1
            order.append(child)
    # bubblewrap's own command lines name the kernel too: they are its ancestors, not it.
    kernels = [p for p in order if "ipykernel" in table.get(p, (0, 0, "", ""))[2]
               and Path(table[p][2].split(" ", 1)[0]).name != "bwrap"]
    if not kernels:
        return []
    kernel = min(kernels, key=lambda p: (depth[p], table[p][1]))
    keep = {kernel}
    pid = kernel
    while pid != launcher and pid in table:
        pid = table[pid][0]
        keep.add(pid)
    return [p for p in order if p not in keep and table.get(p, (0, 0, "", "Z"))[3] != "Z"]


def kill_strays(launcher: int, rounds: int = 20) -> int:
    """SIGKILL every stray process under `launcher` until none is left; returns how many there were."""
    return _kill_until_none(lambda: stray_processes(launcher), rounds=rounds, pause=0.05)


def end_sandbox(launcher: int, timeout: float = 60) -> int:
    """End the sandbox that bubblewrap process `launcher` runs, with every process in it.

    SIGKILL to pid 1 of its pid namespace (the launcher's child) makes the kernel kill
    every process of the namespace, and bubblewrap, which waits for that pid 1, exits
    only once the last of them is gone: so this waits for the launcher to exit (it stays
    a zombie until its parent reaps it). Returns how many processes besides the kernel
    the sandbox held.
    """
    left = len(stray_processes(launcher))
    for child in _children(launcher):
        try:
            os.kill(child, signal.SIGKILL)
        except OSError:
            pass
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _state(launcher) not in (None, "Z"):
        time.sleep(0.02)
    return left


def clear_uid(uid: int, timeout: float = 60) -> int:
    """SIGKILL every process running as `uid` and wait until none is left (zombies included:
    they too count against the process cap). Returns how many were killed."""
    return _kill_until_none(lambda: _processes_of(uid), deadline=time.monotonic() + timeout, pause=0.02)


def _kill_until_none(find, pause: float, rounds: int | None = None, deadline: float | None = None) -> int:
    """SIGKILL the pids `find()` returns until it returns none (or the rounds or the deadline run
    out); returns how many were killed. One loop for strays and for a uid's processes alike."""
    killed: set[int] = set()
    done = 0
    while (rounds is None or done < rounds) and (deadline is None or time.monotonic() < deadline):
        done += 1
        found = find()
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except OSError:
                pass
        time.sleep(pause)
    return len(killed)


def clear_uid_block(pid: int) -> int:
    """`clear_uid` for every uid of the block of process `pid` (a worker that was killed)."""
    first = uid_block(pid)
    return sum(clear_uid(uid) for uid in _uids_running() if first <= uid < first + UIDS_PER_PROCESS)


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (children first)."""
    found, todo = [], _children(pid)
    while todo:
        child = todo.pop(0)
        found.append(child)
        todo += _children(child)
    return found


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()[0]


def _real_uids() -> dict[int, int]:
    """{pid: real uid} of every process."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/status") as f:
                    for line in f:
                        if line.startswith("Uid:"):
                            found[int(entry)] = int(line.split()[1])
                            break
            except OSError:
                pass
    return found


def _processes_of(uid: int) -> list[int]:
    return [pid for pid, owner in _real_uids().items() if owner == uid]


def _uids_running() -> set[int]:
    return set(_real_uids().values())
