"""course.grading.kernel.loading: the text that loads the answer server into a kernel, and asks it to serve.
Run here as a kernel runs it (in this process: the answer server needs nothing of a kernel's to load)."""

import builtins
import subprocess
import sys
import types
import warnings

import pytest

from course.grading.kernel import loading


@pytest.fixture
def loaded(monkeypatch):
    """`load_code()` run in a notebook's namespace; the module it made (removed again afterwards)."""
    monkeypatch.delitem(sys.modules, "_course_answers", raising=False)
    namespace = {"__name__": "__main__"}
    exec(loading.load_code(), namespace)
    module = sys.modules["_course_answers"]
    monkeypatch.delitem(sys.modules, "_course_answers")
    return namespace, module


def test_the_texts_are_the_kernel_side_modules_own():
    folder = loading._KERNEL_SIDE
    assert loading.PROTOCOL_SOURCE == (folder / "protocol.py").read_text()
    assert loading.PACKING_SOURCE == (folder / "wire_encode.py").read_text()
    assert loading.SEALED_SOURCE == (folder / "sealed.py").read_text()
    assert loading.SERVER_SOURCE == (folder / "answer_server.py").read_text()


def test_the_grader_that_sends_them_never_imports_torch():
    probe = "import sys, course.grading.kernel.loading as l; l.load_code(); print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


def test_loading_makes_a_module_of_its_own_and_leaves_the_notebook_as_it_was(loaded):
    namespace, module = loaded
    assert set(namespace) == {"__name__", "__builtins__"}       # no name of the server's in the notebook
    assert isinstance(module, types.ModuleType) and module.__name__ == "_course_answers"
    assert callable(module._course_serve)
    for name in ("send_frame", "receive_frame", "pack"):        # protocol and the encoder ran ahead of the server
        assert callable(getattr(module, name)), name


def test_the_module_keeps_the_builtins_of_when_it_loaded(loaded, monkeypatch):
    _, module = loaded
    kept = module.__dict__["__builtins__"]
    assert type(kept) is dict and kept["divmod"] is divmod
    monkeypatch.setattr(builtins, "divmod", lambda a, b: (0, 0))     # a notebook that patches a builtin later
    assert kept["divmod"](7, 2) == (3, 1)


def test_serve_code_calls_the_loaded_server_with_the_path_and_the_notebooks_names(monkeypatch):
    calls = []
    fake = types.ModuleType("_course_answers")
    fake._course_serve = lambda path, namespace: calls.append((path, namespace))
    monkeypatch.setitem(sys.modules, "_course_answers", fake)
    user_ns = {"x": 1}
    shell = types.SimpleNamespace(user_ns=user_ns)
    path = "/tmp/answers 'quoted\" folder\n/s"                 # any path, passed as a literal
    exec(loading.serve_code(path), {"get_ipython": lambda: shell})
    assert calls == [(path, user_ns)] and calls[0][1] is user_ns


def test_the_courses_probes_come_from_a_copy_sealed_when_the_kernel_started(loaded, monkeypatch):
    """Issue 38's fourth red team: a notebook replaced `helpers.probes_serialization.devices_after` (and others) in
    the modules it imports, and the grader's request for the probe, by name, ran the replacement. Requests now find
    the course's probes in a copy loaded when the kernel starts, whose own imports of helpers stay in it."""
    import pickle

    import helpers.probes_serialization as public

    _, module = loaded
    sealed = module._SEALED
    assert "helpers.probes_serialization" in sealed.modules and "helpers.pretend_cuda" in sealed.modules
    monkeypatch.setattr(public, "devices_after", lambda *args: ["cpu"])         # what the notebook did
    monkeypatch.setattr(public, "_devices", lambda tensors: ["cpu"])
    found = module._Unpickler(pickle.dumps(public.resume_on_gpu), module._Server({})).load()
    assert found is sealed.modules["helpers.probes_serialization"].resume_on_gpu and found is not public.resume_on_gpu
    assert found.__wrapped__.__globals__["_devices"] is not public._devices      # its own module's names
    sealed_probe = module._Unpickler(pickle.dumps(public.scratch_file), module._Server({})).load()
    assert sealed_probe.__module__ == "helpers.probes_serialization" and sealed_probe is not public.scratch_file
    monkeypatch.setitem(sys.modules, "helpers.pretend_cuda", types.ModuleType("helpers.pretend_cuda"))   # swapped
    rng = sealed.modules["helpers.probes_serialization"].resume_on_gpu(lambda *args: None)["rng"]   # imports inside
    assert rng.dtype.is_floating_point is False                   # ran, with the sealed pretend_cuda it imported


def test_an_object_of_a_sealed_class_pickles_as_the_public_class(loaded):
    """A model of the course's probes handed to the student's code is of a sealed class; `torch.save(model)` (a
    wrong answer, as under plain nbgrader) pickled it by name and pickle refused a class sys.modules does not name."""
    import pickle

    import torch

    import helpers.probes_training as public

    _, module = loaded
    sealed = module._SEALED.modules["helpers.probes_training"]
    probe = sealed.LoopProbe(torch.nn.Linear(2, 1))
    assert type(probe) is not public.LoopProbe
    again = pickle.loads(pickle.dumps(probe))
    assert type(again) is public.LoopProbe
    assert {k: v.shape for k, v in again.state_dict().items()} == {k: v.shape for k, v in probe.state_dict().items()}


def test_the_sealed_copy_holds_helpers_and_nothing_else():
    import helpers.checks
    from course.grading.kernel import sealed

    assert sealed._Sealed.holds("helpers") and sealed._Sealed.holds("helpers.checks")
    assert not sealed._Sealed.holds("helpersx.checks") and not sealed._Sealed.holds("torch")
    found = sealed._SEALED.find("helpers.checks", "check_equal")
    assert found is not helpers.checks.check_equal and found.__module__ == "helpers.checks"
    with pytest.raises(ImportError):
        sealed._SEALED.load("helpers.no_such_module")


def test_a_name_rebound_in_the_sealed_copy_fails_every_probe_check(loaded):
    """Issue 38's last red teams: code that hunted the sealed copy down rebound the names its probes call
    (probes_training.note, probes_debugging._global_hooks_now) and kept full marks. Every probe's check
    (records.changed, before and after the student's call) now names what was rebound, added or deleted there."""
    _, module = loaded
    sealed = module._SEALED
    records = sealed.modules["helpers.records"]
    assert sealed.changes() == [] and records.changed() == []
    sealed.modules["helpers.probes_debugging"].__dict__["_global_hooks_now"] = lambda: 0     # what the cheat did
    sealed.builtins["isinstance"] = lambda *args: True
    sealed.modules["helpers.probes_training"].__dict__["len"] = lambda x: 0                 # shadows a builtin
    assert sorted(records.changed()) == ["builtins.isinstance", "helpers.probes_debugging._global_hooks_now",
                                         "helpers.probes_training.len"]
    with pytest.raises(records.ProbeChanged, match="_global_hooks_now"):
        records.check_unchanged(())


def test_a_module_loaded_later_in_the_sealed_copy_is_no_change(loaded):
    _, module = loaded
    sealed = module._SEALED
    sealed.load("helpers.checkpoints")           # not preloaded: the helpers package gains it as an attribute
    assert sealed.changes() == []
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        exec("__import__('warnings').warn('once')", vars(sealed.modules["helpers.pretend_cuda"]))  # Python's own
    assert "__warningregistry__" in vars(sealed.modules["helpers.pretend_cuda"]) and sealed.changes() == []
