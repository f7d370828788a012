"""The grading host's own arrangements: a private mount namespace per worker, capped folders, and a cgroup CPU
group per kernel, so that one submission's busy processes cannot take the CPU of the one beside it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from course.grading.sandbox.policy import MiB

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


# -- a fair share of the CPU, and a cap on memory, for every kernel ------------------------------------------

CONTROLLERS = ("cpu", "memory")


def _hierarchy(controller: str) -> Path | None:
    """Where this machine's `controller` can be given groups: a cgroup v1 hierarchy of it, or the cgroup v2 root
    with it delegated. None where there is none, or it is not ours to write (not root)."""
    if os.geteuid() != 0 or sys.platform != "linux":
        return None
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return None
    for line in mounts:
        fields = line.split()
        if len(fields) > 3 and fields[2] == "cgroup" and controller in fields[3].split(","):
            return Path(fields[1])
    for line in mounts:
        fields = line.split()
        if len(fields) > 2 and fields[2] == "cgroup2":
            root = Path(fields[1])
            try:
                if controller in (root / "cgroup.controllers").read_text().split() and \
                        controller in (root / "cgroup.subtree_control").read_text().split():
                    return root
            except OSError:
                pass
    return None


_ROOTS: dict[str, Path | None] = {}


def _root(controller: str) -> Path | None:
    if controller not in _ROOTS:
        _ROOTS[controller] = _hierarchy(controller)
    return _ROOTS[controller]


def control_groups(name: str, memory: int) -> list[Path]:
    """Control groups of its own for one kernel, `name` (its uid). `cpu`: the scheduler shares the CPU equally
    between groups, so a kernel's hundred busy processes take no more than its share from the kernel graded
    beside it. `memory`: all its processes together, and what they write to its memory-backed folders, stay
    under `memory` bytes (RLIMIT_DATA holds one process only). Where the machine gives neither, none."""
    groups: list[Path] = []
    for controller in CONTROLLERS:
        root = _root(controller)
        if root is None:
            continue
        group = root / "course-grade" / name
        try:
            group.mkdir(parents=True, exist_ok=True)
            if controller == "memory":
                limit = group / "memory.max" if (group / "memory.max").exists() else group / "memory.limit_in_bytes"
                limit.write_text(str(memory))
        except OSError:
            remove_groups([group])
            continue
        if (group / "cgroup.procs").exists() and group not in groups:     # v2: one group holds both
            groups.append(group)
    return groups


def oom_kills(groups: list[Path]) -> int:
    """How many processes the memory controller killed in `groups` (cgroup v1 memory.oom_control, v2
    memory.events)."""
    killed = 0
    for group in groups:
        for name in ("memory.events", "memory.oom_control"):
            try:
                lines = (group / name).read_text().splitlines()
            except OSError:
                continue
            killed += sum(int(line.split()[1]) for line in lines if line.startswith("oom_kill "))
    return killed


def join_groups(groups: list[Path]) -> None:
    """Move the calling process into `groups` (run in the launcher between fork and exec: its children follow)."""
    for group in groups:
        fd = os.open(str(group / "cgroup.procs"), os.O_WRONLY)
        try:
            os.write(fd, str(os.getpid()).encode())
        finally:
            os.close(fd)


def remove_block_groups(first_uid: int, count: int) -> None:
    """Remove the groups of kernels whose uids are `first_uid` and the `count` after it (a worker's block),
    once their processes are gone: what a worker killed at the hard limit could not remove itself."""
    for root in {_root(c) for c in CONTROLLERS} - {None}:
        for group in (root / "course-grade").glob("*"):
            if group.name.isdigit() and first_uid <= int(group.name) < first_uid + count:
                remove_groups([group])


def remove_groups(groups: list[Path]) -> None:
    """Remove a kernel's groups once its processes are gone (an empty group is removed with rmdir)."""
    for group in groups:
        try:
            group.rmdir()
        except OSError:
            pass


# -- the processes of one sandbox ---------------------------------------------------------------

