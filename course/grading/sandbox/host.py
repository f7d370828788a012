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

