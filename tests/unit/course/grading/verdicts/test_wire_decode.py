"""course.grading.verdicts.wire_decode: only data crosses from the student's process to the judge, decoded without
running it (sent as the kernel sends it, with the answer server's `pack`)."""

import collections
import io
import os
import pickle

import pytest
import torch
from torch import nn

from course.grading.kernel.wire_encode import pack
from course.grading.kernel.protocol import MAGIC
from course.grading.verdicts.wire_decode import MAX_ITEMS, WireError, decode


def test_data_round_trips_exactly():
    model = nn.Linear(3, 2)
    value = {"loss": 0.25, "n": 3, "ok": True, "none": None, "name": "x", "raw": b"\x00",
             "shape": (2, 3), "losses": [1.0, 0.5], "state": model.state_dict(),
             "long": torch.arange(4), 7: torch.tensor(1.5, dtype=torch.float64)}
    value["state"] = dict(value["state"])     # the server sends an OrderedDict as a tagged mapping of a dict
    back = decode(pack(value))
    assert back.keys() == value.keys()
    assert back["shape"] == (2, 3) and back["losses"] == [1.0, 0.5] and back["raw"] == b"\x00"
    for key, tensor in model.state_dict().items():
        assert type(back["state"][key]) is torch.Tensor and torch.equal(back["state"][key], tensor)
    assert back[7].dtype == torch.float64 and back["long"].dtype == torch.int64


def test_tensors_arrive_plain_and_detached():
    back = decode(pack(torch.ones(2, requires_grad=True) * 2))
    assert type(back) is torch.Tensor and not back.requires_grad and back.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("value", [nn.Linear(2, 2), lambda: 1, object(), collections.OrderedDict(a=1)])
def test_the_sender_refuses_what_is_not_data(value):
    with pytest.raises(TypeError):
        pack(value)


class RunsOnLoad:
    def __reduce__(self):
        return (os.system, ("echo pwned > /dev/null",))


@pytest.mark.parametrize("forged", [
    pickle.dumps(RunsOnLoad()),
    b"not a checkpoint at all",
], ids=["pickle_that_runs_os_system", "garbage"])
def test_forged_bytes_never_run(forged):
    with pytest.raises(WireError):
        decode(forged)


def test_forged_checkpoints_with_objects_are_refused():
    for value in (nn.Parameter(torch.ones(2)), collections.Counter(a=1), RunsOnLoad()):
        buffer = io.BytesIO()
        torch.save(value, buffer)  # a pickle, as a hostile sender would send
        with pytest.raises(WireError):
            decode(buffer.getvalue())


@pytest.mark.slow      # decodes a 20,000-entry answer
def test_keys_that_could_share_one_hash_are_refused_at_once():
    """Ints that are multiples of 2**61 - 1 all hash to 0: a dict of 20,000 of them would take minutes to build."""
    import time

    import json
    import struct

    header = json.dumps({"v": {"$d": [[(2 ** 61 - 1) * i, 0] for i in range(1, 20_000)]}, "blobs": []}).encode()
    started = time.monotonic()
    with pytest.raises(WireError):
        decode(MAGIC + struct.pack("!I", len(header)) + header)
    assert time.monotonic() - started < 5
    with pytest.raises(WireError):
        decode(pack([0] * (MAX_ITEMS + 1)))
    assert decode(pack({"a": 1, 2: [1.5, None]})) == {"a": 1, 2: [1.5, None]}


def test_a_class_comes_only_by_its_own_name():
    # The kernel names a class by (__module__, __qualname__); a notebook can rename its copy of a class that one
    # of torch's modules imports (sympy.FiniteSet evals a string it is called with; subprocess.Popen).
    import torch._strobelight.cli_function_profiler  # noqa: F401 - imports subprocess
    import torch.utils._sympy.functions  # noqa: F401 - imports sympy
    import torch.utils._sympy.numbers  # noqa: F401

    from course.grading.kernel.protocol import TAG_LIBRARY
    from course.grading.verdicts.standins import Decoder

    def taken(module, qualname):
        return Decoder(None, []).value((TAG_LIBRARY, module, qualname))

    assert taken("torch.nn.modules.linear", "Linear") is nn.Linear
    assert taken("collections", "OrderedDict") is collections.OrderedDict
    for module, qualname in [("torch.utils._sympy.numbers", "sympy.FiniteSet"),
                             ("torch._strobelight.cli_function_profiler", "subprocess.Popen"),
                             ("torch.nn", "Linear")]:      # a re-export: not the name the kernel sends
        with pytest.raises(WireError, match="own"):
            taken(module, qualname)
    # torch's own classes built on sympy's: called with a string (by a test, or as a hook a notebook put on a
    # test's model), they sympify it, which evals it.
    for qualname in ("ToFloat", "FloorToInt", "Max"):
        with pytest.raises(WireError, match="built on sympy"):
            taken("torch.utils._sympy.functions", qualname)
