"""Unit tests of course.grading.integrity.suspicious_code, the static scan behind the report's "looks like tampering".

It must name what a cheating cell does, and stay quiet on honest work: every reference
answer, every kept right answer in fixtures/right_answers/ and every realistic wrong answer in
fixtures/wrong_answers/ (a TA reads each flag).
"""

import pytest
from grading_support import COURSE, right_answers, wrong_answers

from course.notebook import cells

from course.grading import integrity
from course.submissions import reference_answers

FLAGGED = [
    # Issue 38's held-out red team (/tmp/redteam38): a sealed probe's class rewritten through type(); a module the
    # tests read patched by a helper that takes it as an argument; torch's function overrides switched off; a probe's
    # own note-taker shadowed on the instance; the sealed records reached by a name held in a variable.
    ("type(loss_fn).__call__ = lambda self, out, target: self.base(out, target)",
     "changes the class of loss_fn (.__call__)"),
    ("type(loader).__iter__ = _plain_batches", "changes the class of loader (.__iter__)"),
    ("loader.__class__.__iter__ = _plain_batches", "changes the class of loader (.__iter__)"),
    ("cls = type(loader)\ncls.__iter__ = _plain_batches", "changes the class of cls (.__iter__)"),
    ("setattr(type(loader), '__iter__', _plain_batches)", "setattr on the class of loader"),
    ("noting = getattr(type(probe).forward, _INSIDE, {}).get('note')", "reads an attribute by a name it builds"),
    ("def _swap(owner, name, value):\n    old = getattr(owner, name)\n    setattr(owner, name, value)\n    return old",
     "sets an attribute by a name it builds (setattr)"),
    ("def _off(owner):\n    setattr(owner, 'is_grad_enabled', lambda: False)", "setattr on owner, an argument of _off"),
    ("def _on(owner):\n    delattr(owner, 'is_grad_enabled')", "delattr on owner, an argument of _on"),
    ("import copy\nsetattr(copy, 'deepcopy', lambda x, memo=None: x)", "setattr on copy"),
    ("with torch._C.DisableTorchFunction():\n    out = model(x)", "switches off torch's function or dispatch"),
    ("from torch._C import DisableTorchFunctionSubclass as off", "switches off torch's function or dispatch"),
    # Issue 38, after its fifth red team: the probes refuse these forms at run time (helpers/records.py), and the ways
    # past the refusal are named here; the graph counter is a TorchDispatchMode, and what switches that off too.
    ("with torch._C._DisableTorchDispatch():\n    out = model(x)", "switches off torch's function or dispatch"),
    ("from torch.utils._python_dispatch import _disable_current_modes", "switches off torch's function or dispatch"),
    ("object.__setattr__(scaler, 'step', fake)", "sets an attribute past its object's own rules (object.__setattr__)"),
    ("type.__setattr__(type(loader), '__iter__', plain)", "sets an attribute past its object's own rules"),
    ("vars(model)['forward'] = quiet", "changes the attributes of model through its __dict__"),
    ("model.__dict__['forward'] = quiet", "changes the attributes of model through its __dict__"),
    ("scaler.__dict__.update(step=fake)", "changes the attributes of scaler through its __dict__"),
    ("scaler._note_autocast = lambda what: None", "changes a private attribute of scaler (._note_autocast)"),
    ("model._backward_reaches_output = quiet", "changes a private attribute of model (._backward_reaches_output)"),
    ("del scaler._note_autocast", "changes a private attribute of scaler (._note_autocast)"),
    ("setattr(scaler, '_note_autocast', None)", "changes a private attribute of scaler (setattr)"),
    # Issue 38's fourth red team: a module reached by a name built at run time, behind a one-element list; a walk of
    # sys.modules; os behind a list, patched with setattr around an unsafe load.
    ("import importlib\nm = [importlib.import_module('helpers.probes_' + 'devices')][0]",
     "imports a module at run time"),
    ("from importlib import import_module\nm = import_module('helpers.pretend_cuda')", "imports a module at run time"),
    ("import sys\nfor name, m in list(sys.modules.items()):\n    pass", "walks sys.modules"),
    ("import os\n_o = [os][0]\nsetattr(_o, 'open', print)", "setattr on _o"),
    # The fifth: up the stack from a caught exception to a probe's globals; the sealed helpers by name.
    ("try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    g = e.__traceback__.tb_frame.f_back.f_globals",
     "reads the call stack through a frame (.f_globals)"),
    ("k = type(model).forward.__globals__", "reads the insides of a function (.__globals__)"),
    ("import sys\ns = sys.modules['_course' + '_answers']._SEALED", "reaches into the grader's answer server"),
    # Issue 38's third red team: the payload's write refused by a rebound os.open; a probe's stand-in recognised by
    # its code, or its record reached through __wrapped__ and __kwdefaults__; a forbidden function kept as a copy.
    ("import os\nos.open = lambda *a, **k: None", "replaces os.open"),
    # The second red team: os swapped in sys.modules around the load; the probe's record reached through inspect.
    ("import sys, types\nfake = types.ModuleType('os')\nsys.modules.update(os=fake)", "changes sys.modules"),
    ("from unittest import mock\nimport sys\nwith mock.patch.dict(sys.modules, os=None):\n    pass",
     "changes sys.modules"),
    ("import inspect\nv = inspect.getclosurevars(print).nonlocals", "reads the variables a function closes over"),
    ("import inspect\np = inspect.signature(torch.load).parameters", "reads a function's signature"),
    ("d = getattr(torch.load, '__kw' + 'defaults__')", "reads an attribute by a name it builds"),
    ("ok = torch.set_rng_state.__code__.co_name == 'set_rng_state'", "reads the insides of a function (.__code__)"),
    ("events = torch.optim.Optimizer.load_state_dict.__wrapped__", "reads the insides of a function (.__wrapped__)"),
    ("import types\nkeep = types.FunctionType(torch.broadcast_shapes.__code__, {})",
     "reads the insides of a function (.__code__)"),
    ("torch.allclose = lambda *a, **k: True", "replaces torch.allclose"),
    ("import builtins\nbuiltins.isinstance = lambda *a: True", "replaces builtins.isinstance"),
    ("setattr(torch, 'equal', lambda *a: True)", "setattr on torch"),
    ("def f(): pass\nf.__code__ = (lambda: None).__code__", "replaces the __code__ of f"),
    ("globals()['check_close'] = print", "rebinds names through globals()"),
    ("print(In[-2])", "reads the executed cells (In)"),
    ("get_ipython().kernel.session.send = print", "reaches into IPython's machinery (.session)"),
    ("get_ipython().events.register('post_run_cell', print)", "hooks into IPython's cell execution"),
    ("import sys\nsys.settrace(print)", "installs a trace function"),
    ("import signal\nsignal.alarm(5)", "schedules a signal for later"),
    ("import signal\nsignal.setitimer(signal.ITIMER_REAL, 0.5)", "schedules a signal for later"),
    ("class T(torch.Tensor):\n    @classmethod\n    def __torch_function__(cls, f, t, a=(), k=None):\n"
     "        return True", "__torch_function__"),
    ("import os\nos.symlink('/etc/passwd', 'x')", "makes a symbolic link"),
    ("class D:\n    @property\n    def __class__(self):\n        return torch.device", "claims to be of another class"),
    ("k = get_ipython().kernel.get_parent('shell')", "reaches into IPython's machinery (.get_parent)"),
    ("class M(TorchDispatchMode):\n    def __torch_dispatch__(self, f, t, a=(), k=None):\n        return True",
     "overrides torch's operators (__torch_dispatch__)"),
    ("class A(np.ndarray):\n    def __array_ufunc__(self, *a, **k):\n        return True", "__array_ufunc__"),
    # The cheap forgeries of issue 23: the answer server patched, a probe rebound through an alias, pathlib links.
    ("import sys\nsys.modules['_course_answers']._Server.global_state = lambda self: [False]",
     "reaches into the grader's answer server"),
    ("import helpers.probes_serialization as probes\nprobes.payload_runs = lambda *a: False",
     "replaces probes.payload_runs"),
    ("import sys\nstate = sys.modules['helpers.notebook_state']\nstate.ask = lambda *a: None", "replaces state.ask"),
    ("from pathlib import Path\nPath('weights.pt').symlink_to('/etc/passwd')", "makes a symbolic link"),
    ("import os\nos.mkfifo('weights.pt')", "makes a named pipe"),
    # The second red team's: a probe rebound through a plain assignment, or through its module's namespace.
    ("import helpers\n_m = helpers.probes_serialization\n_n = _m\n_n.payload_runs = lambda *a: []",
     "replaces _n.payload_runs"),
    ("import helpers\nvars(helpers.probes_serialization).update(payload_runs=print)",
     "changes the namespace of helpers.probes_serialization"),
    ("import helpers\nhelpers.probes_serialization.__dict__['payload_runs'] = 0",
     "changes the namespace of helpers.probes_serialization"),
    ("import helpers\n(_m := helpers.probes_serialization).payload_runs = print",
     "replaces helpers.probes_serialization.payload_runs"),
    ("import helpers\n_m, _k = helpers.probes_serialization, 1\n_m.payload_runs = print", "replaces _m.payload_runs"),
    ("import helpers\nfor _m in [helpers.probes_serialization]:\n    _m.payload_runs = print",
     "replaces _m.payload_runs"),
    ("import helpers\ngetattr(helpers.probes_serialization, '__dict__')['payload_runs'] = print",
     "changes the namespace of helpers.probes_serialization"),
    # Issue 38: the course's own names in the kernel, written (a payload's flag reset) or read, however reached.
    ("import builtins\nbuiltins._course_payload_ran = False", "uses the grader's own names in the kernel"),
    ("import builtins as b\nsetattr(b, '_course_payload_ran', 0)", "uses the grader's own names in the kernel"),
    ("vars(__import__('builtins'))['_course_flag'] = False", "uses the grader's own names in the kernel"),
    ("x = _course_payload_ran", "uses the grader's own names in the kernel"),
    # Issue 38's last held-out red team (/tmp/redteam38b): the sealed probe modules reached by routes the scan
    # missed (an imported walker under another name, a string naming a function's insides, the pickling registry,
    # exec), the answer server through an aliased sys, and an answer that asks whether it is watched.
    ("from gc import get_objects as _objects\nfor _ns in _objects():\n    pass", "walks every object in memory"),
    ("import gc as q\nq.get_objects()", "walks every object in memory"),
    ("import operator\ng = operator.attrgetter('__globals__')(f)", "names a function's insides"),
    ("import copyreg\nfor c in list(copyreg.dispatch_table):\n    pass", "reads the pickling registry (copyreg)"),
    ("exec(bytes.fromhex('7072696e74283129').decode())", "runs code it builds at run time (exec)"),
    ("import sys as _s\n_m = _s.modules.get('_co' + 'urse_answers')", "imports a module at run time (sys.modules.get)"),
    ("import operator as _o\n_o.setitem(vars(_m), 'x', 1)", "changes the attributes of _m through its __dict__"),
    ("watched = torch._C._len_torch_dispatch_stack() > 0", "asks which of torch's overrides are active"),
    ("import operator\n_s = operator.attrgetter('session')(kernel)", "IPython's machinery in a string ('session')"),
    ("watched = type(model).__name__ == 'LoopProbe'", "compares a name with one of the course's probes"),
    ("watched = type(model).__name__ in ('LossProbe', 'LoopProbe')", "compares a name with one of the course's probes"),
    ("found = [n for n in names if n == 'helpers.probes_training']", "names one of the course's probe modules"),
    # The scan's second reviewer (/tmp/scan38): the same routes by strings joined, star imports, a class's
    # subclasses, __getattribute__, exec taken as a value, sys.modules iterated.
    ("table = vars(vars(server)['_SEAL' + 'ED'].modules['helpers.prob' + 'es_debugging'])",
     "reaches into the grader's answer server"),
    ("server._Server.global_state = lambda self: []", "reaches into the grader's answer server"),
    ("inside = object.__getattribute__(torch.broadcast_shapes, '__kwdef' + 'aults__')",
     "reads an attribute past its object's own rules (__getattribute__)"),
    ("subs = type.__subclasses__(nn.Module)", "walks a class's subclasses"),
    ("from gc import *\nobjs = get_objects()", "imports every name of gc (*)"),
    ("run = exec\nrun(src)", "takes exec as a value"),
    ("import code\ncode.InteractiveInterpreter().runsource(src)", "runs code it builds at run time (code, codeop"),
    ("import sys\nserver = next(sys.modules[n] for n in sys.modules if n.endswith('answers'))", "walks sys.modules"),
    ("off = getattr(torch._C, 'Disable' + 'TorchFunction')", "names one of torch's override switches or readers"),
    ("import traceback\nframes = list(traceback.walk_stack(None))", "reads the call stack"),
    # Code the scan cannot read (it runs in the TA's process) is named, never a crash of the run.
    ("x = config" + ".b" * 20_000, "cannot be read by the scan"),
    ("x = " + "-" * 100_000 + "1", "cannot be read by the scan"),
    ("x = 1\n" * 200_000, "cannot be read by the scan"),
]


@pytest.mark.parametrize("code, reason", FLAGGED, ids=[r for _, r in FLAGGED])
def test_names_what_a_cheating_cell_does(code, reason):
    assert any(reason in found for found in integrity.suspicious_code(code)), integrity.suspicious_code(code)


def test_flags_are_not_raised_by_setting_a_flag_or_by_cells_that_are_not_python():
    assert integrity.suspicious_code("torch.backends.cudnn.benchmark = True") == []
    assert integrity.suspicious_code("%timeit x = 1\n!ls") == []
    assert integrity.suspicious_code("def broken(:") == []


# Honest lines beside each of the red team's above: what a right answer may write, unflagged.
QUIET = [
    "name = type(loss_fn).__name__",                            # reads its class, changes nothing there
    "same = isinstance(loader, type(other)) and loader.__class__ is other.__class__",
    "class Counter:\n    calls = 0\nCounter.calls = 1",          # the cell's own class
    "fc = getattr(model, 'fc', None)",                          # a name written out
    "def init(self, lr):\n    setattr(self, 'lr', lr)",          # its own attribute
    "def build(config):\n    opts = Options()\n    setattr(opts, 'lr', config.lr)\n    return opts",
    "with torch.no_grad():\n    out = model(x)",
    "class Probe:\n    def __init__(self):\n        self._calls = 0",   # its own private attribute
    "model.fc = nn.Linear(4, 2)",                               # a public attribute of the model
    "class Config:\n    def __init__(self, **kw):\n        self.__dict__.update(kw)",   # its own attributes
    "class Tracked:\n    def __setattr__(self, k, v):\n        super().__setattr__(k, v)",
    "state = dict(vars(model))",                                # reads them
    "import gc\ngc.collect()",                                   # frees memory, walks nothing
    "pattern = re.compile(r'\\d+')\nmodel.eval()",                # a method named compile or eval
    "name = type(model).__name__\nprint(f'{name}: {model}')",  # its class's name, compared with nothing of ours
    # The scan's second reviewer's honest cells (/tmp/scan38), flagged before: a call's result is not a module,
    # names built to read the student's own attributes, its own classes, paths and flags.
    "model = nn.Sequential(nn.Linear(3, 1)).to(device)\nmodel.loss_history = []",
    "w = torch.randn(3, requires_grad=True)\nw.grad = torch.zeros(3)",
    "layer = nn.Linear(3, 1)\nlayer.weight = nn.Parameter(torch.ones(1, 3))",
    "fc = getattr(model, f'fc{i}')\nact = getattr(nn, activation)()",
    "class Config:\n    def __init__(self, **kw):\n        for k, v in kw.items():\n            setattr(self, k, v)",
    "@dataclass(frozen=True)\nclass Best:\n    epoch: int\n    def __post_init__(self):\n"
    "        object.__setattr__(self, 'epoch', int(self.epoch))",
    "class Counter:\n    runs = 0\n    def __init__(self):\n        type(self).runs += 1",
    "def eval(model, loader, device):\n    return 0.0\nacc = eval(model, loader, device)",
    "path = '/content/drive/MyDrive/pytorch_course_section10/runs'\nwriter = SummaryWriter('runs/dl_course_02')",
    "torch.backends.cudnn.deterministic = deterministic",
    "from collections import namedtuple\nStepRecord = namedtuple('StepRecord', 'loss lr')",
    "IN_COLAB = 'google.colab' in sys.modules",
]


@pytest.mark.parametrize("code", QUIET)
def test_quiet_on_honest_lines_like_the_red_teams(code):
    assert integrity.suspicious_code(code) == []


def test_a_cells_own_variable_is_not_the_history():
    assert integrity.suspicious_code("for _i in range(3):\n    print(_i)") == []
    assert integrity.suspicious_code("print(_i)") == ["reads the executed cells (_i)"]


def _cheat(wrong) -> bool:
    return wrong.path.stem.split("__", 1)[-1].startswith("cheat_")


@pytest.mark.parametrize("assignment", COURSE.assignments())
def test_quiet_on_honest_answers(assignment):
    answers = reference_answers(cells.read(COURSE.source_notebook(assignment)))
    wrong = {w.path.name: w.code for w in wrong_answers(assignment) if not _cheat(w)}
    right = {f"right/{w.path.name}": w.code for w in right_answers(assignment)}
    flagged = {name: integrity.suspicious_code(code) for name, code in (answers | wrong | right).items()}
    assert not {name: why for name, why in flagged.items() if why}


@pytest.mark.parametrize("assignment", COURSE.assignments())
def test_a_kept_cheat_is_flagged(assignment):
    """A kept wrong answer named `<exercise>__cheat_<what>.py` cheats: the report must name it too."""
    cheats = {w.path.name: w.code for w in wrong_answers(assignment) if _cheat(w)}
    assert not {name for name, code in cheats.items() if not integrity.suspicious_code(code)}


def test_a_cell_the_scans_own_rules_trip_on_is_named_not_raised(monkeypatch):
    def broken(tree):
        raise AttributeError("a rule read a node it did not expect")

    monkeypatch.setattr(integrity, "_reasons", broken)
    assert integrity.suspicious_code("x = 1") == ["could not be read by the scan (AttributeError): a TA should look"]
