"""The sandbox's policy: limits, uids, what a kernel and the judge see (the bubblewrap command line),
and whether a sandbox can be had on this machine."""

from __future__ import annotations

import glob
import importlib.util
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

GiB = 1 << 30
MiB = 1 << 20

# Runs inside the sandbox, before the kernel: see limiter.py.
LIMITER = (Path(__file__).with_name("limiter.py")).read_text()
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
    # Largest file the kernel may write: none of its folders holds more, and its stderr (kernel.log, on the
    # host's disk) stops there.
    file_size: int = 256 * MiB
    open_files: int = 1024
    tmp_size: int = 256 * MiB       # each of the kernel's /tmp, /dev/shm, working folder and home (memory-backed)
    cell_timeout: int | None = None     # None: nbgrader's Execute.timeout (nbgrader_config.py)
    notebook_timeout: int = 900     # all cells of one notebook together
    output_per_cell: int = 1 * MiB  # outputs beyond this are dropped from the autograded notebook

    def total_memory(self) -> int:
        """What all of a kernel's processes may hold together, its four memory-backed folders full included
        (a cgroup's limit, where the machine gives one: see `host.control_groups`)."""
        return self.memory + 4 * self.tmp_size

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
            return [sys.executable, "-c", LIMITER, json.dumps(spec), *kernel_argv]
        # The working folder and home are size-capped tmpfs mounts at their host paths,
        # filled at start from the host folders, which are bound read-only elsewhere.
        seeds = [(f"{SEED_DIR}/{i}", str(path)) for i, path in enumerate((workdir, home))]
        spec["seeds"] = seeds
        limited = [sys.executable, "-c", LIMITER, json.dumps(spec), *kernel_argv]
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
        limited = [sys.executable, "-c", LIMITER, json.dumps(spec), *argv]
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

