"""Real data-parallel training: torch.distributed + DistributedDataParallel in separate processes.

A notebook cannot be one of the processes of a distributed job (each process must run the
same importable code from the start), so the training lives in this module and the notebook
starts it with `run_ddp_demo()`:

    result = run_ddp_demo(world_size=2, steps=3)

which runs `python -m helpers.ddp_demo --rank R --world-size 2 --port P ...` once per rank,
waits at most `timeout_s` seconds, always leaves no process behind, and returns what every
rank reported (JSON on its last line of output) as a dict:

    {"backend": "gloo", "world_size": 2, "ranks": [report of rank 0, report of rank 1]}

Each rank's report holds its device, the rows of the batch it trained on, whether the
parameters were identical on every rank before and after wrapping the model in DDP, and,
for every step, its own shard's loss, the mean loss over all ranks, whether the parameters
are bit-for-bit identical on every rank, and whether they match one process that trained
the same model on the whole batch. Everything in a report is deterministic for a given seed
on a given machine (no timings).

The backend is NCCL when the machine has two or more CUDA GPUs (one per rank) and gloo on
the CPU otherwise.

Why it shuts down cleanly every time (a rank used to abort now and then with "terminate called
without an active exception" while the job was torn down):
- the rendezvous store (the key-value server the ranks meet through) is hosted by the calling
  process, which outlives every rank, on a port the OS picks when it binds it (port 0): no rank
  loses its store while it tears down, and no port can be taken between choosing and binding;
- every rank waits at a barrier before `destroy_process_group`, so no rank closes its connections
  while another still talks to it;
- a rank that has printed its report leaves with `os._exit(0)`, skipping the interpreter's and
  C++'s exit-time destructors, where gloo's and the store's background threads used to abort;
- should a run still fail, it is tried once more, and then the error says what happened.
"""

import argparse
import contextlib
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import torch
from torch import nn

DEFAULT_TIMEOUT_S = 55.0   # below nbgrader's 60 s per cell: a stuck run fails cleanly, it never hangs


HOST = "127.0.0.1"
STORE_TIMEOUT = timedelta(seconds=30)


def pick_backend() -> str:
    """'nccl' when there are two or more CUDA GPUs and NCCL is built in, else 'gloo' (CPU)."""
    import torch.distributed as dist

    if torch.cuda.is_available() and torch.cuda.device_count() >= 2 and dist.is_nccl_available():
        return "nccl"
    return "gloo"


def make_batch(batch_size: int = 16, num_features: int = 4, seed: int = 0):
    """The whole batch `(x, y)` of a small regression problem; every rank builds the same one."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch_size, num_features, generator=g)
    w = torch.randn(num_features, 1, generator=g)
    y = x @ w + 0.1 * torch.randn(batch_size, 1, generator=g)
    return x, y


def make_model(num_features: int = 4, hidden: int = 8, seed: int = 0) -> nn.Module:
    """A two-layer MLP whose initial weights depend only on `seed`."""
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(num_features, hidden), nn.Tanh(), nn.Linear(hidden, 1))


def _flat_parameters(model: nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def _identical_on_every_rank(model: nn.Module) -> bool:
    """All-gather this rank's parameters and compare them bit for bit with every other rank's."""
    import torch.distributed as dist

    mine = _flat_parameters(model)
    everyone = [torch.empty_like(mine) for _ in range(dist.get_world_size())]
    dist.all_gather(everyone, mine)
    return all(torch.equal(other, everyone[0]) for other in everyone)


def train_rank(rank: int, world_size: int, port: int, backend: str = "gloo", steps: int = 3,
               batch_size: int = 16, lr: float = 0.1, seed: int = 0) -> dict:
    """Run one rank of the data-parallel job; returns this rank's report (see the module docstring).

    Called in its own process by `main()`; every rank of the job must call it with the same
    arguments except `rank`. `port` is where the launcher hosts the rendezvous store (a
    `torch.distributed.TCPStore` on 127.0.0.1); this rank connects to it as a client.
    """
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    if batch_size % world_size:
        raise ValueError(f"batch_size {batch_size} does not split evenly over {world_size} ranks")
    torch.set_num_threads(1)  # one core per process: the ranks already run side by side
    device = torch.device(f"cuda:{rank}") if backend == "nccl" else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    store = dist.TCPStore(HOST, port, is_master=False, timeout=STORE_TIMEOUT)
    dist.init_process_group(backend, store=store, rank=rank, world_size=world_size, timeout=STORE_TIMEOUT)
    finished = False
    try:
        # Seeded differently on purpose: DDP must make the replicas equal, not luck.
        model = make_model(seed=seed + 1000 * rank).to(device)
        identical_before = _identical_on_every_rank(model)
        ddp_model = DistributedDataParallel(model, device_ids=[rank] if device.type == "cuda" else None)
        identical_after_wrap = _identical_on_every_rank(model)

        # One process on the whole batch, for comparison: what data parallelism must reproduce.
        single = copy.deepcopy(model)
        single_optimizer = torch.optim.SGD(single.parameters(), lr=lr)
        optimizer = torch.optim.SGD(ddp_model.parameters(), lr=lr)
        loss_fn = nn.MSELoss()

        x, y = make_batch(batch_size, seed=seed)
        x, y = x.to(device), y.to(device)
        per_rank = batch_size // world_size
        start, stop = rank * per_rank, (rank + 1) * per_rank
        x_shard, y_shard = x[start:stop], y[start:stop]

        history = []
        for step in range(1, steps + 1):
            optimizer.zero_grad()
            loss = loss_fn(ddp_model(x_shard), y_shard)
            loss.backward()          # DDP all-reduces (averages) the gradients during backward
            optimizer.step()         # every rank applies the same averaged gradient

            single_optimizer.zero_grad()
            loss_fn(single(x), y).backward()
            single_optimizer.step()

            mean_loss = loss.detach().clone()
            dist.all_reduce(mean_loss)           # a sum over ranks ...
            mean_loss /= world_size              # ... made a mean
            history.append({
                "step": step,
                "shard_loss": loss.item(),
                "mean_loss": mean_loss.item(),
                "params_identical_across_ranks": _identical_on_every_rank(model),
                "matches_single_process": torch.allclose(_flat_parameters(model), _flat_parameters(single),
                                                         rtol=1e-5, atol=1e-6),
            })
        report = {"rank": rank, "world_size": world_size, "backend": backend, "device": str(device),
                  "shard_rows": [start, stop], "batch_size": batch_size,
                  "identical_before_ddp": identical_before, "identical_after_wrap": identical_after_wrap,
                  "steps": history}
        finished = True
        return report
    finally:
        if finished:
            dist.barrier()   # nobody tears down while another rank may still be talking to it
        dist.destroy_process_group()


def run_processes(commands: list[list[str]], timeout_s: float, env: dict | None = None,
                  stderr_texts: list | None = None) -> list[str]:
    """Run the commands side by side; returns each one's stdout (and appends each one's stderr
    to `stderr_texts` when a list is given).

    Raises TimeoutError when they are not all done after `timeout_s` seconds and RuntimeError
    (with the failing command's stderr) as soon as one exits with an error. Either way, and on
    success, every process has ended when this returns: nothing is left behind.
    """
    deadline = time.monotonic() + timeout_s
    with tempfile.TemporaryDirectory(prefix="ddp-demo-") as tmp:
        outs = [open(Path(tmp) / f"{i}.out", "w+") for i in range(len(commands))]
        errs = [open(Path(tmp) / f"{i}.err", "w+") for i in range(len(commands))]
        procs = []
        try:
            for cmd, out, err in zip(commands, outs, errs):
                procs.append(subprocess.Popen(cmd, stdout=out, stderr=err, env=env, stdin=subprocess.DEVNULL))
            while True:
                codes = [p.poll() for p in procs]  # poll every process: poll() is what sets returncode
                if all(code is not None for code in codes):
                    break
                failed = [i for i, code in enumerate(codes) if code not in (None, 0)]
                if failed:
                    i = failed[0]
                    errs[i].seek(0)
                    raise RuntimeError(f"process {i} exited with code {procs[i].returncode}:\n"
                                       + errs[i].read()[-3000:])
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the processes were still running after {timeout_s:g} s; all were stopped")
                time.sleep(0.02)
            for i, p in enumerate(procs):
                if p.returncode != 0:
                    errs[i].seek(0)
                    raise RuntimeError(f"process {i} exited with code {p.returncode}:\n" + errs[i].read()[-3000:])
            texts = []
            for out, err in zip(outs, errs):
                out.seek(0)
                texts.append(out.read())
                if stderr_texts is not None:
                    err.seek(0)
                    stderr_texts.append(err.read())
            return texts
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                p.wait()
            for f in outs + errs:
                f.close()


def _child_env() -> dict:
    """The environment for the rank processes: this package importable, one thread each."""
    env = dict(os.environ)
    package_root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    env["OMP_NUM_THREADS"] = "1"
    return env


def _host_store(world_size: int):
    """The rendezvous store, hosted in this process on a port the OS picks as it binds (port 0)."""
    import torch.distributed as dist

    return dist.TCPStore(HOST, 0, world_size + 1, is_master=True, wait_for_workers=False, timeout=STORE_TIMEOUT)


@contextlib.contextmanager
def _native_stderr_muted():
    """Send what C++ code writes to file descriptor 2 to nowhere, meanwhile. The store's server logs
    warnings there (where a sandbox cannot resolve host names, for every rank that connects), and
    a notebook kernel shows that descriptor in the cell; Python's own sys.stderr is not affected."""
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as sink:
            os.dup2(sink.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _run_once(world_size: int, backend: str, options: list[str], timeout_s: float,
              stderr_texts: list | None = None) -> list[dict]:
    with _native_stderr_muted():
        store = _host_store(world_size)   # lives until every rank has ended: run_processes joins them all
        try:
            commands = [[sys.executable, "-m", "helpers.ddp_demo", "--rank", str(rank), "--world-size",
                         str(world_size), "--port", str(store.port), "--backend", backend, *options]
                        for rank in range(world_size)]
            outputs = run_processes(commands, timeout_s, env=_child_env(), stderr_texts=stderr_texts)
        finally:
            del store
    return [json.loads(text.strip().splitlines()[-1]) for text in outputs]


def run_ddp_demo(world_size: int = 2, steps: int = 3, batch_size: int = 16, seed: int = 0,
                 backend: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S, attempts: int = 2,
                 stderr_texts: list | None = None) -> dict:
    """Train with DDP in `world_size` fresh processes; returns every rank's report.

    `backend` defaults to `pick_backend()`. A failed run is tried again, up to `attempts` runs in
    all, within `timeout_s` seconds in all. Raises TimeoutError when the time is up (the processes
    are stopped) and RuntimeError, saying what the last run's failing rank wrote, when no run succeeded.
    `stderr_texts`, a list, receives what each rank of the successful run wrote on stderr.
    """
    backend = backend or pick_backend()
    if backend == "nccl" and torch.cuda.device_count() < world_size:
        raise ValueError(f"NCCL needs one GPU per rank: {world_size} ranks, {torch.cuda.device_count()} GPUs")
    options = ["--steps", str(steps), "--batch-size", str(batch_size), "--seed", str(seed)]
    deadline = time.monotonic() + timeout_s
    for attempt in range(1, attempts + 1):
        try:
            reports = _run_once(world_size, backend, options, max(deadline - time.monotonic(), 1.0), stderr_texts)
            return {"backend": backend, "world_size": world_size, "ranks": reports}
        except RuntimeError as error:
            if attempt == attempts or deadline - time.monotonic() < 10:
                raise RuntimeError(
                    f"the {world_size}-process DDP demo failed {attempt} time(s) in a row. It starts {world_size} "
                    f"Python processes that talk to each other over {HOST}; something on this machine stopped "
                    f"one of them. Run the cell again; if it keeps failing, the rest of the notebook does "
                    f"not depend on it. What the failing process wrote:\n{error}") from None


def main(argv=None) -> None:
    """Command line of one rank: prints the rank's report as one JSON line."""
    parser = argparse.ArgumentParser(description="One rank of the course's DDP demonstration.")
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world-size", type=int, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--backend", default="gloo", choices=["gloo", "nccl"])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    report = train_rank(args.rank, args.world_size, args.port, backend=args.backend, steps=args.steps,
                        batch_size=args.batch_size, seed=args.seed)
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
    # Leave now, skipping exit-time destructors: gloo's and the store's threads could abort there.
    sys.stderr.flush()
    os._exit(0)
