"""Checkpoint files for the serialization notebook: where their tensors say they live, and traps.

What a student may rely on:

- `save_as_if_on_cuda(obj, path)` writes a file that `torch.load` treats exactly like one saved
  on a GPU: each tensor's storage carries the location tag `'cuda:0'`, the tag `torch.save`
  writes for a tensor that lives on the first GPU. It works on a machine without a GPU.
- `cuda_checkpoint_path(fallback_dir)` finds that shipped file (or regenerates it).
- `write_cuda_checkpoint(path)` regenerates the course's shipped
  `source/04_serialization/data/cuda_checkpoint.pt` (see the README beside it).
- `storage_locations(path)` reads those tags back without needing the devices they name.
- `ArbitraryCode(source)` is an object whose unpickling runs `source`: the reason
  `torch.load(..., weights_only=True)` exists.

How the GPU tag is produced: `torch.save` asks each function registered with
`torch.serialization.register_package` for a storage's location, in priority order, and writes
the first answer into the file's `data.pkl` next to the storage. We register one more tagger,
ahead of PyTorch's own, that answers only while `save_as_if_on_cuda` is running. The tensor bytes
are written exactly as `torch.save` writes a GPU tensor's bytes (it copies them to the CPU first).
"""

import contextlib
import threading
from collections import Counter
from pathlib import Path

import torch
from torch import nn

# Lower numbers are asked first; PyTorch's own taggers use 10 (cpu), 20 (cuda), 21 and up.
_TAGGER_PRIORITY = -1
_state = threading.local()
_registered = False


def _active_tag(storage):
    """The location to write for `storage` while save_as_if_on_cuda runs, else None (PyTorch decides)."""
    tagging = getattr(_state, "tagging", None)
    if tagging is None:
        return None
    device, cpu_pointers = tagging
    return "cpu" if storage.data_ptr() in cpu_pointers else device


def _never_restores(storage, location):
    """Loading is left to PyTorch's own deserializers (this is what makes the error real)."""
    return None


@contextlib.contextmanager
def _tagging_storages_as(device: str, cpu_pointers: set):
    global _registered
    if not _registered:
        torch.serialization.register_package(_TAGGER_PRIORITY, _active_tag, _never_restores)
        _registered = True
    _state.tagging = (device, cpu_pointers)
    try:
        yield
    finally:
        _state.tagging = None


def save_as_if_on_cuda(obj, path, device: str = "cuda:0", keep_on_cpu=()) -> None:
    """`torch.save(obj, path)`, with every tensor's storage tagged `device` instead of `'cpu'`.

    Tensors in `keep_on_cpu` keep the `'cpu'` tag, as tensors that stay on the CPU during GPU
    training do (Adam's step counters, random generator states). `obj` itself is not changed.
    """
    if not str(device).startswith("cuda"):
        raise ValueError(f"device should be a CUDA location such as 'cuda:0', got {device!r}")
    cpu_pointers = {t.untyped_storage().data_ptr() for t in keep_on_cpu}
    with _tagging_storages_as(str(device), cpu_pointers):
        torch.save(obj, path)


def storage_locations(path) -> dict[str, int]:
    """{location tag: number of storages} as written in the checkpoint at `path`.

    Reads the tags through `map_location` given as a function (PyTorch calls it once per storage
    with the storage, already on the CPU, and its tag), so it works whatever devices this machine has.
    """
    seen = Counter()

    def record(storage, location):
        seen[location] += 1
        return storage

    torch.load(path, map_location=record, weights_only=True)
    return dict(sorted(seen.items()))


class ArbitraryCode:
    """An object whose unpickling runs `source` with `exec`: stands for any malicious payload.

    `torch.save({"weights": ..., "extra": ArbitraryCode("print('hi')")}, path)` writes a file
    that prints when loaded with `weights_only=False`, and that `weights_only=True` refuses.
    """

    def __init__(self, source: str):
        self.source = source

    def __reduce__(self):
        # Pickle stores "call builtins.exec with this string"; the loader does exactly that.
        return (exec, (self.source,))


# ---------------------------------------------------------------------------------------------
# The shipped checkpoint: source/04_serialization/data/cuda_checkpoint.pt

CUDA_CHECKPOINT_NAME = "cuda_checkpoint.pt"
CUDA_CHECKPOINT_EPOCHS = 5


def cuda_checkpoint_path(fallback_dir) -> Path:
    """Where the shipped GPU checkpoint is: `data/` beside the notebook, else this checkout's
    `source/04_serialization/data/`; where neither exists (a notebook opened on its own), the same
    file is regenerated into `fallback_dir` with `write_cuda_checkpoint`."""
    candidates = [Path("data") / CUDA_CHECKPOINT_NAME,
                  Path(__file__).resolve().parents[1] / "source" / "04_serialization" / "data" / CUDA_CHECKPOINT_NAME]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    target = Path(fallback_dir) / CUDA_CHECKPOINT_NAME
    write_cuda_checkpoint(target)
    print(f"(no shipped copy found: regenerated {target.name} with helpers.checkpoints.write_cuda_checkpoint)")
    return target


def cuda_checkpoint_model() -> nn.Module:
    """The architecture the shipped checkpoint holds weights for (the notebook writes it out too)."""
    return nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 3))


def write_cuda_checkpoint(path) -> dict:
    """Write the course's GPU-tagged checkpoint to `path` and return what was saved.

    A 2 -> 32 -> 3 classifier trained for `CUDA_CHECKPOINT_EPOCHS` epochs with Adam (lr 0.01) and a
    StepLR scheduler on `helpers.data.make_classification(256, seed=0)`, all seeded; saved as the
    notebook's resume checkpoint: epoch (the last finished, counted from 0), model, optimizer,
    scheduler, rng, cuda_rng. Model weights and Adam's moment estimates are tagged 'cuda:0';
    Adam's step counters and the generator state keep 'cpu', as on a real GPU run.
    """
    from torch.utils.data import DataLoader

    from helpers.data import make_classification

    torch.manual_seed(0)
    loader = DataLoader(make_classification(256, num_features=2, num_classes=3, seed=0),
                        batch_size=32, shuffle=True)
    model = cuda_checkpoint_model()
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    for epoch in range(CUDA_CHECKPOINT_EPOCHS):
        for x, y in loader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
        scheduler.step()
    checkpoint = {
        "epoch": epoch,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "rng": torch.get_rng_state(),
        "cuda_rng": [],  # what torch.cuda.get_rng_state_all() gives where CUDA is absent
    }
    on_cpu = [state["step"] for state in optimizer.state.values()] + [checkpoint["rng"]]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    save_as_if_on_cuda(checkpoint, path, keep_on_cpu=on_cpu)
    return checkpoint


if __name__ == "__main__":  # python -m helpers.checkpoints [PATH]
    import sys

    target = Path(sys.argv[1] if len(sys.argv) > 1 else "source/04_serialization/data/cuda_checkpoint.pt")
    write_cuda_checkpoint(target)
    print(f"wrote {target} ({target.stat().st_size} bytes): {storage_locations(target)}")
