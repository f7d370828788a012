"""Unit tests of helpers.checkpoints: GPU-tagged files, reading tags back, the shipped checkpoint, the payload."""

import builtins
import importlib.util
import tomllib
import zipfile
from pathlib import Path
from unittest import mock

import pytest
import torch
from torch import nn

from helpers import checkpoints
from grading_support import ROOT

SHIPPED = ROOT / "source" / "04_serialization" / "data" / checkpoints.CUDA_CHECKPOINT_NAME


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
    assert SHIPPED.is_file(), f"{SHIPPED} is missing: python scripts/make_cuda_checkpoint.py"
    assert checkpoints.storage_locations(SHIPPED) == {"cpu": 5, "cuda:0": 12}
    with _no_cuda():
        with pytest.raises(RuntimeError, match="map_location=torch.device\\('cpu'\\)"):
            torch.load(SHIPPED, weights_only=True)
        checkpoint = torch.load(SHIPPED, map_location="cpu", weights_only=True)
    assert sorted(checkpoint) == ["cuda_rng", "epoch", "model", "optimizer", "rng", "scheduler"]
    assert checkpoint["epoch"] == checkpoints.CUDA_CHECKPOINT_EPOCHS - 1
    model = checkpoints.cuda_checkpoint_model()
    model.load_state_dict(checkpoint["model"])   # strict: the documented architecture matches the file


def _generator():
    """scripts/make_cuda_checkpoint.py, the maintainers' tool (not part of the package students install)."""
    spec = importlib.util.spec_from_file_location("make_cuda_checkpoint", ROOT / "scripts" / "make_cuda_checkpoint.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_shipped_checkpoint_is_what_the_generator_writes(tmp_path):
    regenerated = _generator().write_cuda_checkpoint(tmp_path / "again.pt")
    shipped = torch.load(SHIPPED, map_location="cpu", weights_only=True)
    for key, tensor in regenerated["model"].items():
        torch.testing.assert_close(shipped["model"][key], tensor, rtol=1e-4, atol=1e-5)
    assert shipped["scheduler"] == regenerated["scheduler"]
    assert checkpoints.storage_locations(tmp_path / "again.pt") == checkpoints.storage_locations(SHIPPED)


def test_every_shipped_copy_is_the_same_file():
    copies = [ROOT / "release" / "04_serialization" / "data" / checkpoints.CUDA_CHECKPOINT_NAME,
              ROOT / "helpers" / "checkpoint_files" / checkpoints.CUDA_CHECKPOINT_NAME]
    assert [c.read_bytes() == SHIPPED.read_bytes() for c in copies] == [True, True]
    assert {Path(c).resolve() for c in _generator().COPIES} == {SHIPPED.resolve(), *(c.resolve() for c in copies)}


def test_cuda_checkpoint_path_prefers_the_file_beside_the_notebook_then_the_package_copy(tmp_path, monkeypatch):
    monkeypatch.chdir(SHIPPED.parents[1])            # as a notebook beside data/ sees it
    assert checkpoints.cuda_checkpoint_path() == Path("data") / checkpoints.CUDA_CHECKPOINT_NAME
    monkeypatch.chdir(tmp_path)                      # a notebook opened on its own (Colab)
    found = checkpoints.cuda_checkpoint_path(tmp_path / "unused")
    assert found == ROOT / "helpers" / "checkpoint_files" / checkpoints.CUDA_CHECKPOINT_NAME and found.is_file()
    assert not (tmp_path / "unused").exists()


def test_the_package_carries_the_checkpoint_file_students_install():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "checkpoint_files/*.pt" in pyproject["tool"]["setuptools"]["package-data"]["helpers"]
    from course.authoring.publish import STUDENT_PYPROJECT

    student = tomllib.loads(STUDENT_PYPROJECT.format(version="0"))
    assert "checkpoint_files/*.pt" in student["tool"]["setuptools"]["package-data"]["helpers"]


def _runs_of_solution_lines(text: str, solution_lines: dict, at_least: int) -> list[str]:
    """Runs of `at_least` or more consecutive lines of `text` that are all solution lines of one exercise."""
    found, run = [], []
    for line in text.splitlines() + [""]:
        exercise = solution_lines.get(line.strip())
        if exercise is not None and (not run or run[-1][1] == exercise):
            run.append((line.strip(), exercise))
            continue
        if len(run) >= at_least:
            found.append(f"{run[0][1]}: {[r[0] for r in run]}")
        run = [(line.strip(), exercise)] if exercise is not None else []
    return found


def test_no_shipped_helper_holds_an_exercise_answer():
    from course.authoring.check import secret_lines
    from course.checkout import Course
    from course.notebook import cells

    course = Course(ROOT)
    secret = secret_lines(*(cells.read(course.source_notebook(a)) for a in course.assignments()))
    answers = {line: gid for line, gid in secret.items() if not gid.startswith("test_")}
    assert _runs_of_solution_lines('x = 1\n"epoch": epoch,\n"model": model.state_dict(),\n"rng": rng',
                                   {'"epoch": epoch,': "e", '"model": model.state_dict(),': "e", '"rng": rng': "e"}, 3)
    held = {str(p.relative_to(ROOT)): _runs_of_solution_lines(p.read_text(), answers, 3)
            for p in sorted((ROOT / "helpers").rglob("*.py"))}
    assert {path: runs for path, runs in held.items() if runs} == {}


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
