"""helpers.process_group: a notebook's function in every rank of a real gloo process group, never hanging and
never leaving a process behind."""

import os
import time

import pytest
import torch
import torch.distributed as dist

from helpers.process_group import one_process_group, run_ranks


def _children() -> set[int]:
    """The pids of this process's children that are still alive (zombies included)."""
    me = str(os.getpid())
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == me:
                found.add(int(entry))
    return found


def _sum_of_ranks(rank, world_size):
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t)
    return {"rank": dist.get_rank(), "world": dist.get_world_size(), "sum": t.item(), "pid": os.getpid()}


@pytest.mark.parametrize("world_size", [1, 2, 3])
def test_every_rank_runs_in_a_process_of_its_own_and_the_collective_is_real(world_size):
    before = _children()
    results = run_ranks(_sum_of_ranks, world_size=world_size, timeout_s=30)
    assert [r.rank for r in results] == list(range(world_size))
    assert all(r.finished and r.error is None for r in results)
    assert [r.value["rank"] for r in results] == list(range(world_size))
    assert {r.value["world"] for r in results} == {world_size}
    assert {r.value["sum"] for r in results} == {world_size * (world_size + 1) / 2}
    pids = {r.value["pid"] for r in results}
    assert len(pids) == world_size and os.getpid() not in pids
    assert _children() == before


def _only_rank_zero_reduces(rank, world_size):
    if rank == 0:
        dist.all_reduce(torch.ones(1))
    return rank


def test_a_collective_only_one_rank_calls_ends_at_the_timeout_and_every_process_is_reaped():
    before = _children()
    started = time.monotonic()
    results = run_ranks(_only_rank_zero_reduces, world_size=2, timeout_s=3)
    assert 3 <= time.monotonic() - started < 10
    assert [r.finished for r in results] == [False, True]
    assert results[1].value == 1 and results[0].value is None
    assert _children() == before


def _rank_one_raises(rank, world_size):
    if rank == 1:
        print("rank 1 says goodbye")
        raise ValueError("no gradient here")
    dist.all_reduce(torch.ones(1))        # fails as rank 1's connections close: no wait for the timeout
    return rank


def test_an_error_comes_back_with_its_type_message_trace_and_output_without_waiting_for_the_timeout():
    started = time.monotonic()
    results = run_ranks(_rank_one_raises, world_size=2, timeout_s=30)
    assert time.monotonic() - started < 15
    assert results[1].error == "ValueError: no gradient here" and results[1].error_type == "ValueError"
    assert "_rank_one_raises" in results[1].trace
    assert "rank 1 says goodbye" in results[1].output
    assert results[0].finished and results[0].error is not None       # its all_reduce lost its peer


def _dies(rank, world_size):
    if rank == 0:
        os._exit(3)                   # a rank that dies without a word (a segfault, the OOM killer)
    return rank


def test_a_rank_that_dies_is_reported_unfinished():
    results = run_ranks(_dies, world_size=2, timeout_s=10)
    assert not results[0].finished and results[0].error is None
    assert results[1].finished and results[1].value == 1


def test_the_parent_process_group_state_is_untouched():
    run_ranks(_sum_of_ranks, world_size=2, timeout_s=30)
    assert not dist.is_initialized()


def test_one_process_group_runs_ddp_in_this_process_and_leaves_no_group_behind():
    """DDP with a communication hook in a group of this process alone: no fork (a forked child cannot run backward
    after the parent ran one with CUDA), the hook sees the gradients, and the group is gone afterwards."""
    from torch.nn.parallel import DistributedDataParallel

    pid, seen = os.getpid(), []

    def hook(state, bucket):
        seen.append((os.getpid(), bucket.buffer().clone()))
        done = torch.futures.Future()
        done.set_result(bucket.buffer())
        return done

    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    with one_process_group():
        assert dist.get_world_size() == 1 and dist.get_rank() == 0
        ddp = DistributedDataParallel(model)
        ddp.register_comm_hook(None, hook)
        ddp(torch.randn(4, 3)).sum().backward()
    assert not dist.is_initialized()
    assert seen and all(p == pid for p, _ in seen)
    assert sum(b.numel() for _, b in seen) == sum(p.numel() for p in model.parameters())
    assert model.weight.grad is not None


def test_one_process_group_refuses_to_nest():
    with one_process_group():
        with pytest.raises(RuntimeError, match="already belongs"):
            with one_process_group():
                pass
    assert not dist.is_initialized()
