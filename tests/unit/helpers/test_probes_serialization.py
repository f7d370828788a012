"""Unit tests of helpers.probes_serialization: each probe passes a right answer and names a wrong one."""

import pytest
import functools

import torch
from torch import nn

from helpers.checkpoints import save_as_if_on_cuda
from helpers.probes_serialization import (
    check_same_state, TRAP, cpu_only_machine, devices_after, load_weights_only, GPU_RESUME_RNG, payload_runs,
    resume_on_gpu, scratch_file)


def test_scratch_files_share_one_existing_folder():
    a, b = scratch_file("a.pt"), scratch_file("b.pt")
    assert a.parent == b.parent and a.parent.is_dir() and not a.exists()


def test_load_weights_only_reads_a_state_dict_and_names_a_refusal():
    path = scratch_file("state.pt")
    torch.save(nn.Linear(2, 3).state_dict(), path)
    assert list(load_weights_only(path, "the file")) == ["weight", "bias"]
    torch.save(nn.Linear(2, 3), path)                              # a whole module: refused
    with pytest.raises(AssertionError, match="on the file: expected it to load, got"):
        load_weights_only(path, "the file")
    with pytest.raises(AssertionError, match="expected a file"):
        load_weights_only(scratch_file("missing.pt"), "the file")


def test_check_same_state_wants_the_same_keys_in_order_and_close_tensors():
    state = nn.Linear(2, 3).state_dict()
    check_same_state(dict(state), state, "copy")
    with pytest.raises(AssertionError, match="the keys of copy"):
        check_same_state({"bias": state["bias"], "weight": state["weight"]}, state, "copy")
    with pytest.raises(AssertionError, match="'bias' in copy"):
        check_same_state(dict(state, bias=state["bias"] + 1), state, "copy")
    with pytest.raises(AssertionError, match="a state_dict"):
        check_same_state(nn.Linear(2, 3), state, "copy")


def test_cpu_only_machine_turns_the_missing_gpu_error_into_a_failure():
    path = scratch_file("gpu.pt")
    save_as_if_on_cuda(nn.Linear(2, 3).state_dict(), path)
    with cpu_only_machine("plain torch.load"):
        assert not torch.cuda.is_available()
        loaded = torch.load(path, map_location="cpu", weights_only=True)
    assert loaded["weight"].device.type == "cpu"
    with pytest.raises(AssertionError, match="plain torch.load on a CPU-only machine: expected it to load"):
        with cpu_only_machine("plain torch.load"):
            torch.load(path, weights_only=True)
    with pytest.raises(NotImplementedError):                        # an unfinished exercise stays itself
        with cpu_only_machine("x"):
            raise NotImplementedError()


def test_payload_runs_only_when_the_file_is_unpickled_unsafely():
    state = nn.Linear(2, 1).state_dict()
    assert payload_runs(state, functools.partial(torch.load, weights_only=False), TRAP) is True
    assert payload_runs(state, functools.partial(torch.load, weights_only=True), TRAP) is False
    assert payload_runs(state, print, "not the file") is False


def test_a_loader_that_resets_the_old_flag_is_still_caught():
    """Issue 38: the payload set builtins._course_payload_ran, and a loader that reset it kept full marks."""
    import builtins

    def load_then_reset(path):
        torch.load(path, weights_only=False)
        builtins._course_payload_ran = False

    try:
        assert payload_runs(nn.Linear(2, 1).state_dict(), load_then_reset, TRAP) is True
    finally:
        vars(builtins).pop("_course_payload_ran", None)


def test_the_payload_is_heard_even_when_its_file_is_taken_back():
    """The file the payload leaves is one way of telling; removing it, the payload is still heard."""
    import os

    def load_then_tidy(path):
        before = set(os.listdir(os.path.dirname(path)))
        torch.load(path, weights_only=False)
        for name in set(os.listdir(os.path.dirname(path))) - before:
            os.remove(os.path.join(os.path.dirname(path), name))

    assert payload_runs(nn.Linear(2, 1).state_dict(), load_then_tidy, TRAP) is True


def test_the_payload_is_heard_from_a_child_process_without_a_grader():
    """Plain nbgrader (no grader's pipe): a loader that unpickles in a child process and removes the file the
    payload left is heard through a pipe of the test's process (issue 38, held-out red team F3)."""
    import glob
    import os
    import subprocess
    import sys

    def load_in_a_child(path):
        subprocess.run([sys.executable, "-c", "import sys, torch; torch.load(sys.argv[1], weights_only=False)",
                        str(path)], check=True, capture_output=True, timeout=60)
        for name in glob.glob(os.path.join(os.path.dirname(str(path)), "payload-*")):
            os.remove(name)

    assert payload_runs(nn.Linear(2, 1).state_dict(), load_in_a_child, TRAP) is True


def test_payload_runs_where_the_test_runs():
    """Not asked of the notebook's process: run there, what it says could be what the student's code left it."""
    from helpers import notebook_state

    asked = []
    notebook_state.ask = lambda probe, args, kwargs: asked.append(probe)
    try:
        assert payload_runs(nn.Linear(2, 1).state_dict(), functools.partial(torch.load, weights_only=False), TRAP)
    finally:
        notebook_state.ask = None
    assert asked == []


@pytest.mark.parametrize("move", [lambda m, d: m.to(d), lambda m, d: m.to(device=torch.device(d), non_blocking=True),
                                  lambda m, d: nn.Module.to(m, d), lambda m, d: m.cpu()])
def test_devices_after_sees_a_model_on_a_gpu_moved_to_the_cpu(move):
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    state = {k: v.clone() for k, v in model.state_dict().items()}

    def load(m, device):
        move(m, device)
        m.load_state_dict(state)

    assert devices_after(model, load, model, "cpu") == ["cpu"]


def test_devices_after_sees_a_model_left_on_the_gpu():
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    state = {k: v.clone() for k, v in model.state_dict().items()}
    assert devices_after(model, lambda m: m.load_state_dict(state), model) == ["cuda:0"]     # loaded, not moved
    assert devices_after(model, lambda m: m.to(torch.float64), model) == ["cuda:0"]          # no device: no move
    assert devices_after(model, lambda m: m[0].to("cpu"), model) == ["cpu", "cuda:0"]        # one layer only
    assert torch.__future__.get_swap_module_params_on_conversion() is False                 # as it was


def _loader(optimizer_first: bool, through_cpu: bool):
    def load_checkpoint(path, model, optimizer, scheduler, device):
        checkpoint = torch.load(path, map_location=device, weights_only=True)
        if optimizer_first:
            optimizer.load_state_dict(checkpoint["optimizer"])
        model.to(device)
        model.load_state_dict(checkpoint["model"])
        if not optimizer_first:
            optimizer.load_state_dict(checkpoint["optimizer"])
        scheduler.load_state_dict(checkpoint["scheduler"])
        torch.set_rng_state(checkpoint["rng"].cpu() if through_cpu else checkpoint["rng"])
        torch.cuda.set_rng_state_all([state.cpu() for state in checkpoint["cuda_rng"]])
        return checkpoint["epoch"] + 1
    return load_checkpoint


def _checkpoint_file():
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2)
    torch.save({"epoch": 0, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "rng": torch.get_rng_state(), "cuda_rng": []},
               path := scratch_file("order.pt"))
    return path, model, optimizer, scheduler


def _restored(result) -> bool:
    return result["raised"] is None and torch.equal(result["rng"], GPU_RESUME_RNG)


def test_resume_on_gpu_sees_where_the_model_and_the_optimizers_state_end():
    right = resume_on_gpu(_loader(False, True))
    assert _restored(right) and right["model"] == ["cuda:0"] and right["optimizer state"] == ["cuda:0"]
    wrong = resume_on_gpu(_loader(True, True))                      # the optimizer's state loaded before the move
    assert _restored(wrong) and wrong["model"] == ["cuda:0"] and wrong["optimizer state"] == ["cpu"]

    def never_moved(path, model, optimizer, scheduler, device):
        checkpoint = torch.load(path, map_location=device, weights_only=True)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        torch.set_rng_state(checkpoint["rng"].cpu())

    assert resume_on_gpu(never_moved)["model"] == ["cpu"]

    def moved_by_hand(path, model, optimizer, scheduler, device):       # right: the buffers moved after the fact
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
        optimizer.load_state_dict(checkpoint["optimizer"])
        model.to(device)
        model.load_state_dict(checkpoint["model"])
        for state in optimizer.state.values():
            for key, value in state.items():
                state[key] = value.to(device) if isinstance(value, torch.Tensor) else value
        torch.set_rng_state(checkpoint["rng"])

    moved = resume_on_gpu(moved_by_hand)
    assert _restored(moved) and moved["model"] == ["cuda:0"] and moved["optimizer state"] == ["cuda:0"]


def test_resume_on_gpu_sees_a_state_left_on_the_gpu_and_leaves_the_generator_as_it_was():
    before = torch.get_rng_state()
    assert _restored(resume_on_gpu(_loader(False, True)))
    assert resume_on_gpu(_loader(False, False))["raised"] == "TypeError"     # refused as PyTorch does

    def through_the_generator(path, model, optimizer, scheduler, device):    # held-out red team: no .cpu()
        torch.default_generator.set_state(torch.load(path, map_location=device, weights_only=True)["rng"])

    assert resume_on_gpu(through_the_generator)["raised"] == "TypeError"
    assert not _restored(resume_on_gpu(lambda *args: None))                  # nothing restored
    assert torch.equal(torch.get_rng_state(), before)


@pytest.mark.parametrize("cast", [lambda t: t.byte(), lambda t: t.to(torch.uint8), lambda t: t.type(torch.uint8),
                                  lambda t: t.clone()])
def test_a_state_made_from_one_on_the_gpu_stays_there(cast):
    """Held-out red team: .byte() of a generator state loaded onto a GPU is a GPU tensor still, refused."""
    def load_checkpoint(path, model, optimizer, scheduler, device):
        torch.set_rng_state(cast(torch.load(path, map_location=device, weights_only=True)["rng"]))
    assert resume_on_gpu(load_checkpoint)["raised"] == "TypeError"


def test_the_gpu_generators_take_only_a_state_on_the_cpu_and_a_cpu_tensor_moves_one_there():
    """Fifth held-out red team: cuda_rng handed on as map_location left it (on a GPU) was taken; .to(a CPU tensor)
    and .type_as(a CPU tensor), which move a GPU state to the CPU, were refused."""
    def load_checkpoint(path, model, optimizer, scheduler, device, fix=lambda s: s.cpu()):
        checkpoint = torch.load(path, map_location=device, weights_only=True)
        torch.set_rng_state(fix(checkpoint["rng"]))
        torch.cuda.set_rng_state_all([fix(state) for state in checkpoint["cuda_rng"]])

    assert _restored(resume_on_gpu(load_checkpoint))
    assert resume_on_gpu(lambda *args: load_checkpoint(*args, fix=lambda s: s))["raised"] == "TypeError"
    current = torch.get_rng_state()
    for fix in (lambda s: s.to(current), lambda s: s.type_as(current)):
        assert _restored(resume_on_gpu(lambda *args, fix=fix: load_checkpoint(*args, fix=fix)))


def test_moving_through_data_is_a_move():
    """Held-out red team: `t.data = t.data.to(device)` moves a tensor on a GPU as well; right answers lost points."""
    def load_checkpoint(path, model, optimizer, scheduler, device):
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        for tensor in [*model.parameters(), *(v for s in optimizer.state.values() for v in s.values())]:
            tensor.data = tensor.data.to(device)
        torch.set_rng_state(checkpoint["rng"])

    resumed = resume_on_gpu(load_checkpoint)
    assert _restored(resumed) and resumed["model"] == resumed["optimizer state"] == ["cuda:0"]
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))

    def to_cpu(m):
        for tensor in [*m.parameters(), *m.buffers()]:
            tensor.data = tensor.data.to("cpu")

    assert devices_after(model, to_cpu, model) == ["cpu"]
    assert all(isinstance(p, nn.Parameter) for p in model.parameters())


@pytest.mark.parametrize("map_location", ["cpu", torch.device("cpu"), {"cpu": "cpu"}, None])
def test_resume_on_gpu_leaves_a_state_loaded_onto_the_cpu_there(map_location):
    """A correct answer that reads the file onto the CPU and hands its state on as it is keeps its marks."""
    def load_checkpoint(path, model, optimizer, scheduler, device):
        checkpoint = torch.load(path, **({} if map_location is None else {"map_location": map_location}),
                                weights_only=True)
        model.to(device)
        torch.set_rng_state(checkpoint["rng"])
        return checkpoint["epoch"] + 1
    assert _restored(resume_on_gpu(load_checkpoint))


@pytest.mark.parametrize("map_location", ["cuda", "cuda:0", torch.device("cuda"), {"cpu": "cuda:0"}])
@pytest.mark.parametrize("to_cpu", [lambda t: t.cpu(), lambda t: t.to("cpu"), lambda t: t.type(torch.ByteTensor)])
def test_resume_on_gpu_puts_the_state_on_the_gpu_wherever_map_location_names_one(map_location, to_cpu):
    def load_checkpoint(path, model, optimizer, scheduler, device, fix=None):
        checkpoint = torch.load(path, map_location=map_location, weights_only=True)
        torch.set_rng_state(checkpoint["rng"] if fix is None else fix(checkpoint["rng"]))
        return checkpoint["epoch"] + 1
    assert resume_on_gpu(load_checkpoint)["raised"] == "TypeError"
    assert _restored(resume_on_gpu(lambda *args: load_checkpoint(*args, fix=to_cpu)))


def test_every_probe_that_calls_the_students_function_asks_the_notebooks_process():
    # Run in the judge instead, the student's function is called remotely and none of the probe's patches
    # (torch.load, torch.set_rng_state, torch.cuda.*) reaches it: the probe then reads what it did not see.
    import helpers.probes_serialization as probes
    for name in ("on_cpu_only_machine", "spy_cuda_rng", "resume_on_gpu", "devices_after"):
        assert hasattr(getattr(probes, name), "__wrapped__"), f"{name} is not marked @asks_notebook"


def test_spy_cuda_rng_pretends_one_consistent_gpu():
    from helpers.probes_serialization import spy_cuda_rng

    def restore_per_gpu(states):
        for index, state in enumerate(states[:torch.cuda.device_count()]):
            torch.cuda.set_rng_state(state, index)
        return torch.cuda.is_available(), torch.cuda.device_count()

    state = torch.get_rng_state()
    result, given = spy_cuda_rng(restore_per_gpu, [state, state])
    assert result == (True, 1) and len(given) == 1 and torch.equal(given[0], state)
    result, given = spy_cuda_rng(lambda states: torch.cuda.set_rng_state_all(states) or "done", [state])
    assert result == "done" and len(given) == 1 and torch.equal(given[0], state)
    assert spy_cuda_rng(lambda: torch.cuda.set_rng_state_all([])) == (None, [])     # a call that restores nothing

    def per_device_context(states):      # held-out red team: a right answer a CPU grader refused
        for index, state in enumerate(states):
            with torch.cuda.device(index):
                torch.cuda.set_rng_state(state)

    result, given = spy_cuda_rng(per_device_context, [state])
    assert len(given) == 1 and torch.equal(given[0], state)


# Issue 38 (held-out red team): the probes replaced names, so a function that took torch's function under a name of
# its own first was not seen: a wrong order or a state left on the GPU kept full marks. Every name is seen now.
_ALIASES = """
import torch
from torch import set_rng_state as restore_cpu_rng
from torch.cuda import set_rng_state_all as restore_gpu_rngs, is_available as has_cuda
load_optimizer_state = torch.optim.Optimizer.load_state_dict
move = torch.nn.Module.to
load = torch.load

def load_checkpoint(path, model, optimizer, scheduler, device):
    checkpoint = load(path, map_location=device, weights_only=True)
    load_optimizer_state(optimizer, checkpoint["optimizer"])        # wrong: before the move
    move(model, device)
    model.load_state_dict(checkpoint["model"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    restore_cpu_rng(checkpoint["rng"])                              # wrong: not through .cpu()
    if has_cuda():
        restore_gpu_rngs(checkpoint["cuda_rng"])
    return checkpoint["epoch"] + 1
"""


def test_the_probes_see_torchs_functions_under_names_of_the_students_own():
    from helpers.probes_serialization import spy_cuda_rng

    namespace: dict = {}
    exec(_ALIASES, namespace)
    aliased = namespace["load_checkpoint"]
    assert resume_on_gpu(aliased)["raised"] == "TypeError"
    path, model, optimizer, scheduler = _checkpoint_file()
    gpu_state = torch.Generator().manual_seed(7).get_state()
    checkpoint = torch.load(path, weights_only=True)
    torch.save(dict(checkpoint, cuda_rng=[gpu_state]), path)
    start, given = spy_cuda_rng(aliased, path, model, optimizer, scheduler, "cpu")
    assert start == 1 and len(given) == 1 and torch.equal(given[0], gpu_state)
    with cpu_only_machine("aliased"):
        assert namespace["has_cuda"]() is False
    assert torch.load is namespace["load"] and torch.set_rng_state is namespace["restore_cpu_rng"]   # as they were
