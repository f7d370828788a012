"""Finding and ending the processes of a sandbox, of a uid, or of a worker's block of uids (from /proc)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from course.grading.sandbox.policy import UIDS_PER_PROCESS, uid_block


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
