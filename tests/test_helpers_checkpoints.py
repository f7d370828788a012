"""Unit tests of helpers.checkpoints: GPU-tagged files, reading tags back, the shipped checkpoint, the payload."""

import builtins
import zipfile
from pathlib import Path
from unittest import mock

import pytest
import torch
from torch import nn

from helpers import checkpoints

SHIPPED = (Path(__file__).resolve().parents[1] / "source" / "04_serialization" / "data"
           / checkpoints.CUDA_CHECKPOINT_NAME)


def _no_cuda():
    """A CPU-only machine, even when the tests run on a GPU box."""
    return mock.patch("torch.cuda.is_available", return_value=False)


def test_save_as_if_on_cuda_tags_every_storage(tmp_path):
    path = tmp_path / "w.pt"
    state = nn.Linear(3, 2).state_dict()
    checkpoints.save_as_if_on_cuda(state, path)
    assert checkpoints.storage_locations(path) == {"cuda:0": 2}
    # The tag is written into the pickle exactly where torch.save puts a GPU tensor's location.
    with zipfile.ZipFile(path) as archive:
        pickle_bytes = archive.read(next(n for n in archive.namelist() if n.endswith("data.pkl")))
    assert b"cuda:0" in pickle_bytes and b"cpu" not in pickle_bytes


def test_without_map_location_a_cpu_machine_gives_the_real_cuda_error(tmp_path):
    path = tmp_path / "w.pt"
    checkpoints.save_as_if_on_cuda(nn.Linear(3, 2).state_dict(), path)
    with _no_cuda(), pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
        torch.load(path, weights_only=True)


def test_map_location_cpu_gives_the_saved_values(tmp_path):
    path = tmp_path / "w.pt"
    state = nn.Linear(3, 2).state_dict()
    checkpoints.save_as_if_on_cuda(state, path)
    with _no_cuda():
        loaded = torch.load(path, map_location="cpu", weights_only=True)
    assert all(torch.equal(loaded[k], state[k]) and loaded[k].device.type == "cpu" for k in state)


def test_keep_on_cpu_and_ordinary_saves_are_untouched(tmp_path):
    rng = torch.get_rng_state()
    checkpoints.save_as_if_on_cuda({"w": torch.ones(2), "rng": rng}, tmp_path / "a.pt", keep_on_cpu=[rng])
    assert checkpoints.storage_locations(tmp_path / "a.pt") == {"cpu": 1, "cuda:0": 1}
    torch.save({"w": torch.ones(2)}, tmp_path / "b.pt")           # the tagger only answers inside the helper
    assert checkpoints.storage_locations(tmp_path / "b.pt") == {"cpu": 1}
    with pytest.raises(ValueError):
        checkpoints.save_as_if_on_cuda({}, tmp_path / "c.pt", device="cpu")


def test_shipped_checkpoint_is_gpu_tagged_and_loads_on_cpu():
    assert SHIPPED.is_file(), f"{SHIPPED} is missing: python -m helpers.checkpoints"
    assert checkpoints.storage_locations(SHIPPED) == {"cpu": 5, "cuda:0": 12}
    with _no_cuda():
        with pytest.raises(RuntimeError, match="map_location=torch.device\\('cpu'\\)"):
            torch.load(SHIPPED, weights_only=True)
        checkpoint = torch.load(SHIPPED, map_location="cpu", weights_only=True)
    assert sorted(checkpoint) == ["cuda_rng", "epoch", "model", "optimizer", "rng", "scheduler"]
    assert checkpoint["epoch"] == checkpoints.CUDA_CHECKPOINT_EPOCHS - 1
    model = checkpoints.cuda_checkpoint_model()
    model.load_state_dict(checkpoint["model"])   # strict: the documented architecture matches the file


@pytest.mark.slow
def test_shipped_checkpoint_is_what_the_generator_writes(tmp_path):
    regenerated = checkpoints.write_cuda_checkpoint(tmp_path / "again.pt")
    shipped = torch.load(SHIPPED, map_location="cpu", weights_only=True)
    for key, tensor in regenerated["model"].items():
        torch.testing.assert_close(shipped["model"][key], tensor, rtol=1e-4, atol=1e-5)
    assert shipped["scheduler"] == regenerated["scheduler"]
    assert checkpoints.storage_locations(tmp_path / "again.pt") == checkpoints.storage_locations(SHIPPED)


@pytest.mark.slow      # regenerates the checkpoint
def test_cuda_checkpoint_path_prefers_the_shipped_file_and_regenerates_otherwise(tmp_path, monkeypatch):
    monkeypatch.chdir(SHIPPED.parents[1])            # as a notebook beside data/ sees it
    assert checkpoints.cuda_checkpoint_path(tmp_path) == Path("data") / checkpoints.CUDA_CHECKPOINT_NAME
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(checkpoints, "__file__", str(tmp_path / "helpers" / "checkpoints.py"))
    found = checkpoints.cuda_checkpoint_path(tmp_path / "out")
    assert found == tmp_path / "out" / checkpoints.CUDA_CHECKPOINT_NAME and found.is_file()


def test_arbitrary_code_runs_only_without_weights_only(tmp_path):
    path = tmp_path / "trap.pt"
    trap = checkpoints.ArbitraryCode("import builtins; builtins._helpers_test_ran = True")
    torch.save({"w": torch.zeros(1), "x": trap}, path)
    try:
        with pytest.raises(Exception, match="Unsupported global"):
            torch.load(path, weights_only=True)
        assert not getattr(builtins, "_helpers_test_ran", False)
        torch.load(path, weights_only=False)
        assert builtins._helpers_test_ran is True
    finally:
        builtins.__dict__.pop("_helpers_test_ran", None)
