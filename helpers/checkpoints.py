"""Checkpoint files for the serialization notebook: where their tensors say they live, and traps.

What a student may rely on:

- `save_as_if_on_cuda(obj, path)` writes a file that `torch.load` treats exactly like one saved
  on a GPU: each tensor's storage carries the location tag `'cuda:0'`, the tag `torch.save`
  writes for a tensor that lives on the first GPU. It works on a machine without a GPU.
- `cuda_checkpoint_path()` finds the shipped GPU checkpoint: beside the notebook, else the copy in this
  package. It is written by the maintainers' `scripts/make_cuda_checkpoint.py` (it holds notebook 04's
  checkpoint format, an exercise's answer, so it is not part of this package); see
  `source/04_serialization/data/README.md`.
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
# The shipped checkpoint: source/04_serialization/data/cuda_checkpoint.pt, and a copy in this package

CUDA_CHECKPOINT_NAME = "cuda_checkpoint.pt"
CUDA_CHECKPOINT_EPOCHS = 5


def cuda_checkpoint_path(fallback_dir=None) -> Path:
    """Where the shipped GPU checkpoint is: `data/` beside the notebook, else the copy this package carries
    (`helpers/checkpoint_files/`, for a notebook opened on its own, as on Colab). `fallback_dir` is not
    used any more (the package always carries the file); it is accepted so that older notebooks still run."""
    beside = Path("data") / CUDA_CHECKPOINT_NAME
    return beside if beside.is_file() else Path(__file__).resolve().parent / "checkpoint_files" / CUDA_CHECKPOINT_NAME


def cuda_checkpoint_model() -> nn.Module:
    """The architecture the shipped checkpoint holds weights for (the notebook writes it out too)."""
    return nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 3))
