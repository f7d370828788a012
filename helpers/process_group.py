"""Run a function of the notebook in every rank of a real `torch.distributed` process group.

A rank of a distributed job is a process of its own. `helpers.ddp_demo` starts fresh Python
processes, which can only run code that lives in a file; a function defined in a notebook cannot
be pickled for them. This module forks the notebook's own process instead (`os.fork`): each
child already holds the notebook's functions, joins a gloo process group, runs `rank_fn(rank,
world_size)` and hands back what it returned:

    results = run_ranks(lambda rank, world_size: ..., world_size=2, timeout_s=20)
    results[0]   # RankResult(rank=0, value=..., error=None, finished=True)

How the ranks meet and talk: through a `FileStore` (a file in a fresh temporary folder; no TCP
port for the rendezvous) and gloo's TCP transport on the loopback interface, the only network
a grading sandbox has. gloo carries CPU tensors: CUDA cannot be used in a forked child once the
notebook's process has touched it, so every rank computes on the CPU even on a GPU machine
(`helpers.ddp_demo` shows NCCL, one fresh process per GPU). Nor can a forked child run a backward pass once
the notebook's process has run one with CUDA initialised (PyTorch's autograd-and-fork rule: the parent's
autograd engine has started a thread per GPU, which a fork does not carry). What needs a process group
but no second rank runs in the notebook's own process instead: `one_process_group()`.

Why it never hangs and never leaves a process behind:
- the launcher waits at most `timeout_s` seconds for every rank, then kills those still running
  (a collective that not every rank calls waits forever) and reaps every child, always;
- after `rank_fn` a rank writes its result to a file, then waits (in the store, not with a
  collective, which could pair with another rank's unfinished one) until every rank has written
  its own, so no rank closes its connections while another still talks to it; then it destroys
  the process group and leaves with `os._exit`, skipping the exit-time handlers it inherited;
- what a rank prints (gloo's own warnings included) goes to a log file, never to the notebook.

Needs `os.fork`: Linux (Colab included) and macOS. On Windows, run the notebook in WSL or Colab.
"""

import contextlib
import io
import os
import signal
import sys
import tempfile
import time
import traceback
import warnings
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import torch

DEFAULT_TIMEOUT_S = 20.0   # a healthy 2-rank run takes about a second; a test cell has 60 s


@dataclass
class RankResult:
    """What one rank did: the value `rank_fn` returned, or the error it raised (`"TypeError: ..."`, its class
    name in `error_type`, with `trace`, the lines of the traceback), or neither when it never finished
    (`finished` False: it was still running when the time was up, or it died)."""

    rank: int
    value: object = None
    error: str | None = None
    error_type: str | None = None      # the exception's class name, e.g. "NotImplementedError"
    trace: str = ""
    finished: bool = False
    output: str = ""          # what the rank printed, its last 2,000 characters


def fork_available() -> bool:
    return hasattr(os, "fork")


def run_ranks(rank_fn, world_size: int = 2, timeout_s: float = DEFAULT_TIMEOUT_S) -> list[RankResult]:
    """Fork `world_size` processes, join them in a gloo process group and run `rank_fn(rank, world_size)`
    in each; returns one `RankResult` per rank, in rank order, once every rank has ended or was killed.

    `rank_fn`'s return value must be picklable by `torch.save` (tensors, numbers, lists, dicts).
    """
    if not fork_available():
        raise RuntimeError("running ranks from a notebook needs os.fork (Linux, macOS, Colab); "
                           "on Windows, use WSL or Colab")
    deadline = time.monotonic() + timeout_s
    with tempfile.TemporaryDirectory(prefix="ranks-") as folder:
        root = Path(folder)
        pids: list[int] = []
        ended: dict[int, int] = {}
        try:
            with warnings.catch_warnings():
                # Python 3.12 warns that fork() in a process with threads may deadlock the child: the child
                # here calls no lock another thread could hold before it runs torch on one thread.
                warnings.simplefilter("ignore", DeprecationWarning)
                sys.stdout.flush(), sys.stderr.flush()
                for rank in range(world_size):
                    pid = os.fork()
                    if pid == 0:                         # the child: never returns
                        _child(rank_fn, rank, world_size, root, timeout_s)
                    pids.append(pid)
            ended = _wait(pids, deadline)
        finally:
            for pid in pids:                             # kill what still runs, reap everything
                if pid not in ended:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                    with contextlib.suppress(ChildProcessError):
                        os.waitpid(pid, 0)
        return [_result(root, rank) for rank in range(world_size)]


@contextlib.contextmanager
def one_process_group(timeout_s: float = DEFAULT_TIMEOUT_S):
    """A gloo process group of the notebook's own process alone (rank 0 of world size 1), for as long as the
    `with` block runs: DDP, its hooks and collectives work in it, and nothing is forked, so it works wherever the
    notebook runs, after CUDA too. Refuses to start inside a group the process already belongs to."""
    import torch.distributed as dist

    if dist.is_initialized():
        raise RuntimeError("this process already belongs to a process group: leave it first "
                           "(dist.destroy_process_group())")
    with tempfile.TemporaryDirectory(prefix="group-") as folder:
        interface = os.environ.get("GLOO_SOCKET_IFNAME")
        os.environ["GLOO_SOCKET_IFNAME"] = "lo"      # loopback: the one network a sandbox has
        try:
            dist.init_process_group("gloo", store=dist.FileStore(str(Path(folder) / "store"), 1), rank=0,
                                    world_size=1, timeout=timedelta(seconds=timeout_s))
            try:
                yield
            finally:
                dist.destroy_process_group()
        finally:
            if interface is None:
                os.environ.pop("GLOO_SOCKET_IFNAME", None)
            else:
                os.environ["GLOO_SOCKET_IFNAME"] = interface


def _wait(pids: list[int], deadline: float) -> dict[int, int]:
    """Reap the children as they end, until all have or the deadline passes; {pid: wait status}."""
    ended: dict[int, int] = {}
    while len(ended) < len(pids) and time.monotonic() < deadline:
        for pid in pids:
            if pid not in ended:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    ended[pid] = status
        time.sleep(0.01)
    return ended


def _result(root: Path, rank: int) -> RankResult:
    path = root / f"{rank}.pt"
    log = root / f"{rank}.log"
    output = log.read_text(errors="replace")[-2000:] if log.exists() else ""
    if not path.exists():
        return RankResult(rank, finished=False, output=output)
    record = torch.load(path, weights_only=False)    # written by our own child, just now
    return RankResult(rank, value=record.get("value"), error=record.get("error"), error_type=record.get("error_type"),
                      trace=record.get("trace", ""), finished=True, output=output)


def _child(rank_fn, rank: int, world_size: int, root: Path, timeout_s: float) -> None:
    """One rank, in the forked child. Ends the process; never returns."""
    code = 1
    try:
        log = open(root / f"{rank}.log", "w", buffering=1)
        os.dup2(log.fileno(), 1)                         # C++ (gloo) and Python output alike, to the log
        os.dup2(log.fileno(), 2)
        sys.stdout = sys.stderr = io.TextIOWrapper(os.fdopen(os.dup(log.fileno()), "wb", buffering=0),
                                                   write_through=True)
        import torch.distributed as dist

        torch.set_num_threads(1)           # the parent's thread pool did not survive the fork
        os.environ["GLOO_SOCKET_IFNAME"] = "lo"      # loopback: the one network a sandbox has
        store = dist.FileStore(str(root / "store"), world_size)
        dist.init_process_group("gloo", store=store, rank=rank, world_size=world_size,
                                timeout=timedelta(seconds=timeout_s))
        record: dict = {}
        try:
            record["value"] = rank_fn(rank, world_size)
        except BaseException as error:   # noqa: BLE001 - the student's code may raise anything
            record = {"error": f"{type(error).__name__}: {error}", "error_type": type(error).__name__,
                      "trace": "".join(traceback.format_exception(error))[-4000:]}
        torch.save(record, root / f"{rank}.tmp")
        os.replace(root / f"{rank}.tmp", root / f"{rank}.pt")
        if "error" not in record:
            # Wait in the store (not with a collective, which could pair with one another rank has not finished)
            # until every rank has written its result: then nobody still needs this one's connections. A rank
            # that raised leaves at once instead, and a collective waiting for it fails as its connections close.
            store.add("finished", 1)
            while int(store.add("finished", 0)) < world_size:
                time.sleep(0.005)
            dist.destroy_process_group()
        code = 0
    except BaseException:                 # noqa: BLE001 - whatever happens, the child must end here
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
        os._exit(code)
