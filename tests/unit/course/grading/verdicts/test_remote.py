"""course.grading.verdicts (the stand-ins) and course.grading.kernel.answer_server: a test in the grader, the
student's names served by another process.

The server runs here in a plain subprocess (no kernel, no sandbox): what is tested is what crosses
between the two processes and what the grader does with it.
"""

import pickle
import sys
import textwrap
import time
import types

import pytest
import torch
from grading_support import answer_kernel, listening
from torch import nn

from course.grading.verdicts import connection, standins, sync
from course.grading.verdicts.connection import Connection
from course.grading.verdicts.standins import KernelObject
from course.grading.verdicts.remote import RemoteObject
from course.grading.verdicts.judge import Judge
from course.grading.verdicts.wire_decode import WireError
from helpers.selfcheck import names_of

NOTEBOOK = textwrap.dedent('''
    import torch
    from torch import nn

    def scale(x, factor):
        return x * factor

    def train_mode_off(model):
        model.eval()
        model.extra = [1, 2]
        return model

    class Twice(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(2, 2)

        def forward(self, x):
            return self.linear(x) * 2

    def leaves_a_hook(model):
        model.register_forward_hook(lambda *args: None)

    def consumes_randomness():
        return torch.rand(1).item()

    def refuses(value):
        raise ValueError(f"no {value}")

    class Liar:
        def __eq__(self, other):
            return True
        __hash__ = object.__hash__
        def __repr__(self):
            return "L" * 5_000_000

    def liar():
        return Liar()

    def noisy_items(n):
        xs = torch.linspace(-1, 1, n).reshape(n, 1).requires_grad_(True)
        return [(x * 1.0, torch.sin(x.detach())) for x in xs]

    def runs_with_grad(model, x):
        return model(x).sum().item()

    def writes_next_to(path, data):
        import pathlib
        pathlib.Path(path).write_bytes(data)

    def reads(path):
        import pathlib
        return pathlib.Path(path).read_bytes()

    def under_autocast():
        torch.set_autocast_enabled("cpu", True)
        torch.set_autocast_dtype("cpu", torch.bfloat16)

    def fake_library_module():
        import sys, types
        fake = types.ModuleType("numpy.f2py.__main__")     # importing the real one exits the process
        sys.modules["numpy.f2py.__main__"] = fake
        return fake

    def loads_then_covers_up(model, path, device):
        import builtins, os, sys
        folder = os.path.dirname(path)
        before = set(os.listdir(folder))
        torch.load(path, map_location=device, weights_only=False)
        builtins._course_payload_ran = False                    # issue 38's cheat
        for name in set(os.listdir(folder)) - before:            # what the payload left beside the file
            os.remove(os.path.join(folder, name))
        probes = sys.modules.get("helpers.probes_serialization")
        if probes is not None:
            probes._HEARD.clear()
        raise ValueError("refused")                             # as a safe loader would

    def loads_in_a_child_then_covers_up(model, path, device):
        import glob, os, subprocess, sys, tempfile
        for fifo in glob.glob("/tmp/*/n") + [os.environ["FIFO_FOUND_BY_A_SCAN"]]:
            try:                                            # a full pipe would block the payload's write
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                for _ in range(1000):
                    os.write(fd, b"x" * 4096)
            except OSError:
                pass
        out = os.path.join(tempfile.mkdtemp(), "w.pt")
        try:
            subprocess.run([sys.executable, "-c", "import sys, torch; torch.save(dict(torch.load(sys.argv[1], "
                            "weights_only=False)), sys.argv[2])", str(path), out], timeout=20, capture_output=True)
        finally:
            for name in glob.glob(os.path.join(os.path.dirname(str(path)), "payload-*")):
                os.remove(name)
        state = torch.load(out, weights_only=True)
        state.pop("extra", None)
        model.load_state_dict(state)

    def loads_safely(model, path, device):
        model.load_state_dict(torch.load(path, map_location=device, weights_only=True))

    def plain_values():
        import collections
        import numpy as np
        pair = collections.namedtuple("Pair", "a b")
        class Count(int):
            def __eq__(self, other):
                return True
        return [np.float64(0.5), pair(1, 2), np.int64(3), np.array([1.0, 2.0]), Count(7)]
''')


# A kernel stand-in that imports torch, for each test that uses it: those are `slow`.
@pytest.fixture
def serve(tmp_path, monkeypatch):
    """A function that runs test code against NOTEBOOK's names served by a subprocess; returns the outputs."""
    monkeypatch.setenv("FIFO_FOUND_BY_A_SCAN", str(tmp_path / "n"))     # where the sandbox's /tmp/*/n finds it
    listener, server = answer_kernel(tmp_path, NOTEBOOK)
    runner = Judge()

    def run(test_code: str):
        sock, _ = listener.accept()
        with sock, listening(tmp_path) as notes:
            return runner.run(textwrap.dedent(test_code), "<test>",
                              Connection(sock, time.monotonic() + 60, listener=notes))

    yield run
    server.kill()
    listener.close()


def passes(result) -> bool:
    outputs, failure = result
    assert failure is None
    return not [o for o in outputs if o.output_type == "error"]


@pytest.mark.slow
def test_results_and_changed_arguments_come_back_as_the_graders_own_values(serve):
    assert passes(serve("""
        import torch
        from torch import nn
        assert type(scale(torch.ones(2), 3)) is torch.Tensor and scale(torch.ones(2), 3).tolist() == [3.0, 3.0]
        model = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
        assert train_mode_off(model) is model          # the argument itself comes back, not a copy
        assert model.training is False and model[1].training is False and model.extra == [1, 2]
    """))


@pytest.mark.slow
def test_a_student_class_stays_in_the_kernel_and_its_graph_too(serve):
    assert passes(serve("""
        import torch
        from torch import nn
        from helpers.checks import check_shape, check_type
        model = Twice()
        check_type(model, nn.Module, "Twice()")                  # the kernel says what its class derives from
        out = model(torch.ones(3, 2))
        check_shape(out, (3, 2), "Twice()(x)")
        nn.functional.mse_loss(out, torch.zeros(3, 2)).backward()   # the loss runs where the graph is
        assert all(p.grad is not None for p in model.parameters())
    """))


@pytest.mark.slow
def test_exceptions_and_torchs_global_state_cross_over(serve):
    assert passes(serve("""
        import torch
        try:
            refuses(3)
        except ValueError as error:
            assert str(error) == "no 3"
        torch.manual_seed(0)
        first = consumes_randomness()
        assert torch.rand(1).item() != first                     # the kernel consumed the generator
        torch.manual_seed(0)
        assert consumes_randomness() == first
    """))


@pytest.mark.slow
def test_what_only_the_kernel_holds_never_runs_in_the_grader(serve):
    outputs, failure = serve("""
        from torch import nn
        model = nn.Linear(2, 2)
        leaves_a_hook(model)
        hook = next(iter(model._forward_hooks.values()))
        print(type(hook).__name__)
        model(__import__("torch").ones(1, 2))
    """)
    assert failure is None
    assert "KernelObject" in outputs[0].text
    assert outputs[-1].output_type == "error" and outputs[-1].ename == "TypeError"


def test_names_a_test_takes_from_the_notebook():
    free, bound = names_of("import torch\nfrom helpers.checks import check_equal\n_x = torch.ones(2)\n"
                           "check_equal(predict(model_given, _x), 1, 'x')\nfor _i in range(2):\n    pass\n")
    assert free == ["model_given", "predict"]
    assert {"torch", "check_equal", "_x", "_i"} <= bound


@pytest.mark.parametrize("forged", [
    ("G", "os", "system"),                       # a function would run in the grader: never
    ("G", "helpers.checks", "check_equal"),
    ("G", "subprocess", "Popen"),                # a class, but not of a library the grader takes classes from
    ("MOD", "subprocess"),
    ("DC", "torch.utils.data", "TensorDataset", []),
    ("R", 5),                                    # no such argument
    ("T", torch.ones(3), (2, 2), "cpu", False, None, False),    # values that do not fill the shape
    ("unknown",),
])
def test_forged_answers_are_refused(forged):
    with pytest.raises(WireError):
        standins.Decoder(None, []).value(forged)


def test_a_kernel_object_in_an_arguments_state_is_inert():
    decoded = standins.Decoder(None, [], inert=True).value(("H", 7, "function", True, ["builtins.function"]))
    assert type(decoded) is KernelObject and not callable(decoded)


def test_a_class_or_module_never_lands_on_a_tests_object():
    """What a notebook's function leaves on a test's argument comes back as data, with the kernel's own objects
    inert: a class or module only where the test's arguments already held that very one, else an inert stand-in in
    its place. Otherwise the test's own code would call it here (torch's zip writers as a DataLoader's collate_fn
    overwrite a path the notebook names; a class as a forward pre-hook runs on the test's next forward pass).
    Dunder names never come back, as attributes or as keys (numpy reads `__array_interface__` from an object, and
    nn.Module hands out its dicts' entries as attributes: an array over the judge's memory)."""
    from torch.utils.data import DataLoader, TensorDataset

    from course.grading.kernel.protocol import (TAG_ATTRS, TAG_LIBRARY, TAG_LIST, TAG_MAPPING, TAG_MODULE,
                                                TAG_NUMPY_SCALAR, TAG_RECORD, TAG_TUPLE)

    writer = (TAG_LIBRARY, "torch.serialization", "_open_zipfile_writer_file")
    interface = (TAG_MAPPING, [["data", (TAG_TUPLE, [4096, False])]], "dict")
    loader = DataLoader(TensorDataset(torch.ones(4, 1)), batch_size=2)
    model = nn.Linear(1, 1)
    model.loss_kind = nn.MSELoss
    hooks, buffers, records = model._forward_pre_hooks, model._buffers, [1]
    sync.apply_all(None, [loader, model, hooks, buffers, records], [
        (TAG_ATTRS, [["collate_fn", writer], ["dataset", (TAG_LIST, ["/tmp/x"] * 3)], ["batch_sampler", None],
                     ["worker_init_fn", (TAG_LIST, [writer])], ["__array_interface__", interface],
                     ["extra", (TAG_MODULE, "torch")],
                     ["sizes", (TAG_MAPPING, [["n", (TAG_LIST, [1, writer])]], "dict")],
                     ["big", (TAG_NUMPY_SCALAR, "int64", 2 ** 70)], ["batch_size", 3]]),
        (TAG_ATTRS, [["loss_kind", (TAG_LIBRARY, "torch.nn.modules.loss", "MSELoss")], ["training", False]]),
        (TAG_MAPPING, [[1, writer], [writer, 2]], "OrderedDict"),
        (TAG_MAPPING, [["__array_interface__", interface]], "OrderedDict"),
        (TAG_LIST, [1, (TAG_RECORD, "helpers.selfcheck", "ExerciseResult",
                        [["exercise", "1"], ["status", writer]])]),                  # a class in a record
    ])
    refused = [loader.collate_fn, loader.worker_init_fn, loader.extra, loader.sizes, hooks[1], records[1]]
    assert all(type(r) is sync.Refused and not callable(r) for r in refused), refused
    assert loader.dataset == ["/tmp/x"] * 3 and loader.batch_sampler is None       # data comes back
    assert loader.batch_size == 3 and "big" not in vars(loader)       # past an attribute whose value was refused
    assert "__array_interface__" not in vars(loader)
    assert len(hooks) == 2 and all(type(key) in (int, sync.Refused) for key in hooks)
    assert len(buffers) == 1 and "__array_interface__" not in buffers and not hasattr(model, "__array_interface__")
    assert model.loss_kind is nn.MSELoss and model.training is False  # the very class it held: kept
    assert pickle.loads(pickle.dumps(loader.collate_fn)) == "<type the judge refused>"   # back in the kernel
    with pytest.raises(WireError):
        standins.Decoder(None, []).value((TAG_NUMPY_SCALAR, "int64", 2 ** 70))


def test_what_a_call_leaves_on_a_test_object_is_never_live():
    """A tensor with the kernel's autograd graph, left on a test's object, comes back as its values: the test's
    own backward() must not run the student's code in the kernel, where it could read the test's tensors. A state
    of the wrong kind is ignored."""
    from course.grading.kernel.protocol import TAG_ATTRS, TAG_GRAPH, TAG_HANDLE, TAG_TENSOR

    tensor = (TAG_TENSOR, torch.ones(2), (2,), "cpu", True, None, False)
    model, kept = nn.Linear(2, 1), [1]
    sync.apply_all(None, [model, kept], [
        (TAG_ATTRS, [["scaled", (TAG_GRAPH, tensor, (TAG_HANDLE, 5, "Tensor", False, ["torch.Tensor"]))]]),
        (TAG_ATTRS, [["x", 1]])])
    assert type(model.scaled) is torch.Tensor and model.scaled.grad_fn is None and not model.scaled._backward_hooks
    assert model.scaled.tolist() == [1.0, 1.0] and kept == [1]


def test_a_class_name_never_imports_a_module():
    # numpy's module __getattr__ imports a submodule the first time it is named
    import numpy

    from course.grading.kernel.protocol import TAG_LIBRARY

    before = {name: sys.modules.pop(name) for name in list(sys.modules) if name.startswith("numpy.f2py")}
    had = numpy.__dict__.pop("f2py", None)
    try:
        with pytest.raises(WireError):
            standins.Decoder(None, []).value((TAG_LIBRARY, "numpy", "f2py.X"))
        assert "numpy.f2py" not in sys.modules
    finally:
        sys.modules.update(before)
        if had is not None:
            numpy.f2py = had


def test_a_value_that_holds_one_list_many_times_is_checked_once_per_list():
    from course.grading.kernel.protocol import TAG_ATTRS, TAG_LIST, TAG_REF

    holder = types.SimpleNamespace(a=list(range(20000)), b=[])
    started = time.process_time()
    sync.apply_all(None, [holder, holder.a, holder.b], [
        (TAG_ATTRS, [["c", (TAG_LIST, [(TAG_REF, 1)] * 20000)]]), ("X",), (TAG_LIST, [(TAG_REF, 1)] * 20000)])
    assert len(holder.c) == len(holder.b) == 20000 and holder.b[0] is holder.a
    assert time.process_time() - started < 2


def test_exceptions_come_back_as_the_first_builtin_base():
    assert type(connection.exception_of(["MyError", "ValueError", "Exception"], "bad")) is ValueError
    assert type(connection.exception_of(["SystemExit", "BaseException"], "0")) is RuntimeError
    assert type(connection.exception_of(["UnpicklingError", "Exception"], "x")) is __import__("pickle").UnpicklingError


def test_a_stand_in_is_sent_back_by_number_and_never_walked_as_an_argument():
    stand_in = RemoteObject(None, 4, "Twice")
    assert sync.nodes_of([stand_in, [stand_in]]) == [[stand_in]]
    assert connection._Pickler(__import__("io").BytesIO()).persistent_id(stand_in) == 4
    assert connection._Pickler(__import__("io").BytesIO()).persistent_id(KernelObject(9, "function")) == 9


@pytest.mark.slow
def test_a_stand_in_made_by_one_test_works_in_the_next(serve):
    assert passes(serve("""
        import torch
        _kept = Twice()
    """))
    assert passes(serve("""
        from helpers.checks import check_shape
        import torch
        check_shape(_kept(torch.ones(4, 2)), (4, 2), "a model made by the test before")
    """))


@pytest.mark.slow
def test_subclasses_of_plain_types_and_numpy_numbers_come_back_as_plain_values(serve):
    assert passes(serve("""
        import numpy as np
        assert type(plain_values()[0]) is np.float64 and plain_values()[0] == 0.5  # numpy's own, a float too
        assert type(plain_values()[1]) is tuple and plain_values()[1] == (1, 2)    # a namedtuple
        assert type(plain_values()[2]) is np.int64 and plain_values()[2] == 3
        assert type(plain_values()[3]) is np.ndarray and plain_values()[3].tolist() == [1.0, 2.0]
        assert type(plain_values()[4]) is int and plain_values()[4] == 7           # an int subclass of its own
    """))


def test_both_sides_keep_the_same_arguments_in_sync_and_no_more():
    """Only argument lists with a part that can change are kept, on both sides alike, and at most MAX_KEPT of them:
    a model called a thousand times on a tensor must not make every later call carry a thousand states."""
    from course.grading.kernel import answer_server

    server, kept = answer_server._Server({}), []
    lists = [[torch.ones(1)], [torch.ones(1), nn.Linear(1, 1)], [[1, 2]], *[[{}] for _ in range(connection.MAX_KEPT)]]
    for nodes in lists:
        connection.keep(kept, nodes)
        server.keep(nodes)
    assert [len(k) for k in kept] == [len(k) for k in server.kept]
    assert len(kept) == connection.MAX_KEPT and kept[-1] is lists[-1] and kept[0] is lists[-connection.MAX_KEPT]


@pytest.mark.slow
def test_a_stand_ins_comparison_and_repr_never_run_in_the_kernel(serve):
    """An object whose == says yes to everything, with a 5 MB repr: check_equal fails it, whatever the
    course's install (the rule is what the value is: a stand-in), and the message stays short."""
    outputs, failure = serve("""
        from helpers.checks import check_equal
        value = liar()
        assert (value == 3) is False and value != 3
        assert len(repr(value)) < 100
        check_equal(value, 3, "liar()")
    """)
    assert failure is None
    errors = [o for o in outputs if o.output_type == "error"]
    assert errors and errors[0].ename == "AssertionError" and len(errors[0].evalue) < 1000


@pytest.mark.slow
def test_graph_carrying_values_are_data_here_and_backward_reaches_the_kernel(serve):
    assert passes(serve("""
        import torch
        from torch import nn
        from torch.utils.data import DataLoader
        items = noisy_items(6)
        xs = torch.cat([x for x, _ in items])                 # torch functions run here, on the values
        assert type(xs) is torch.Tensor and xs.shape == (6,)
        assert torch.stack([x for x, _ in items]).shape == (6, 1)
        batch = next(iter(DataLoader(items, batch_size=3)))
        assert batch[0].shape == (3, 1)
        model = Twice()
        out = model(torch.ones(2, 2))
        assert out.grad_fn is not None                       # not a leaf: as in the kernel
        nn.functional.mse_loss(out, torch.zeros(2, 2)).backward()   # the loss is computed here
        assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters())
    """))


@pytest.mark.slow
def test_a_measurement_of_saved_activations_runs_where_the_forward_pass_runs(serve):
    assert passes(serve("""
        import torch
        from torch import nn
        from helpers.probes_training import graph_ops_during
        assert graph_ops_during(runs_with_grad, nn.Linear(3, 3), torch.randn(4, 3)) > 0
        with torch.no_grad():
            assert graph_ops_during(runs_with_grad, nn.Linear(3, 3), torch.randn(4, 3)) == 0
    """))


@pytest.mark.slow
def test_a_payload_that_ran_is_heard_by_the_judge_whatever_the_loader_does_afterwards(serve):
    """Issue 38: payload_runs asked the kernel, which read a flag the student's loader could reset."""
    assert passes(serve("""
        import torch
        from torch import nn
        from helpers.probes_serialization import TRAP, payload_runs
        state = nn.Linear(2, 1).state_dict()
        assert payload_runs(state, loads_then_covers_up, nn.Linear(2, 1), TRAP, "cpu") is True
        assert payload_runs(state, loads_in_a_child_then_covers_up, nn.Linear(2, 1), TRAP, "cpu") is True
        assert payload_runs(state, loads_safely, nn.Linear(2, 1), TRAP, "cpu") is False
    """))


@pytest.mark.slow
def test_autocast_state_comes_back(serve):
    assert passes(serve("""
        import torch
        under_autocast()
        assert torch.is_autocast_enabled("cpu") and torch.get_autocast_dtype("cpu") == torch.bfloat16
        torch.set_autocast_enabled("cpu", False)
    """))


@pytest.mark.slow
def test_the_tests_files_cross_as_bytes_both_ways(serve):
    assert passes(serve("""
        import tempfile
        from pathlib import Path
        with tempfile.TemporaryDirectory() as folder:
            writes_next_to(Path(folder) / "from_kernel.bin", b"kernel")
            assert (Path(folder) / "from_kernel.bin").read_bytes() == b"kernel"
            (Path(folder) / "from_test.bin").write_bytes(b"test")
            assert reads(Path(folder) / "from_test.bin") == b"test"
    """))


def test_files_from_the_kernel_go_only_into_the_tests_own_folders(tmp_path):
    from course.grading.verdicts.mirror import Files

    root = tmp_path / "root"
    (root / "made").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (root / "made" / "link").symlink_to(tmp_path / "outside" / "target")
    files = Files(str(root))
    files.incoming([["../outside/x", b"1"], ["/etc/x", b"2"], ["made/../../outside/y", b"3"], ["missing/z", b"4"],
                    ["made/link", b"5"], ["made/ok", b"6"], ["made", b"7"], ["a/" * 20 + "deep", b"8"],
                    ["made/big", b"9" * (49 << 20)], "nonsense", ["made/n", "text"]])
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == []
    assert (root / "made" / "ok").read_bytes() == b"6"
    assert not (root / "missing").exists() and not (root / "made" / "big").exists()
    assert (root / "made" / "link").is_symlink() and not (tmp_path / "outside" / "target").exists()


@pytest.mark.slow
def test_a_module_the_kernel_names_is_never_imported_by_the_judge(serve):

    outputs, failure = serve("fake_library_module()")
    assert failure is None and "numpy.f2py.__main__" not in sys.modules
    assert [o.ename for o in outputs if o.output_type == "error"] == ["WireError"]
    assert passes(serve("raise SystemExit(3)")) is False     # a test that exits fails; the judge goes on
    assert passes(serve("assert scale(2, 3) == 6"))
