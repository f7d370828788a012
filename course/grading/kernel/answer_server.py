"""The student's side of grading outside the kernel: serve calls on the submission's names.

`course grade` never runs a test cell in the student's kernel. For each test cell it
sends this module's source to the kernel with a call of `_course_serve(path)` after it;
the kernel connects to the grader over the unix socket at `path` and answers requests
until the grader says the test is over. Each request names something to do with the
kernel's objects: read a name of the notebook, call a function or a method, read or
set an attribute. The grader runs the test in its own process (`course.grading.verdicts.remote`) and
sends here only the arguments a call needs.

What this module sends back is data only (`wire_encode.pack`: JSON plus the raw bytes of tensors, which
`course.grading.verdicts.wire_decode.decode` reads without running anything): numbers, strings, plain tensors,
tuples, lists, dicts and sets of these, tagged so that the grader can tell a reference to
one of its own arguments (`R`), an object that stays here and is named by a number (`H`),
a tensor with its device, `requires_grad` and `.grad` (`T`), a record of the course's
probes (`DC`) and so on. After every request it also sends the state of every argument
the grader listed (a model's parameters and flags, an optimizer's state, a probe's
records), and torch's global state (gradient mode, random number generator, default
dtype), which the grader takes over, so that a test sees what the call changed exactly as
it would in the kernel.

Nothing here is trusted: a student's code can replace any of it, and then sends nonsense
that the grader refuses or judges as a wrong answer. The file runs with only the standard
library and torch, as the kernel has no `course` package.
"""

import dataclasses as _dataclasses
import io as _io
import os as _os
import pickle as _pickle
import socket as _socket
import stat as _stat
import sys as _sys

import torch as _torch

# The protocol's names (course.grading.kernel.protocol) and the encoder (course.grading.kernel.wire_encode): in the
# kernel their text has run in this module's namespace just before this file's (the kernel has no `course`
# package); imported when this file is imported as a module.
if "MAGIC" not in globals():
    from course.grading.kernel.protocol import (  # noqa: F401 - the kernel's copy needs no import
        AUTOCAST_DEVICES,
        END,
        HELLO,
        LIBRARIES,
        MAX_EXCEPTION_TEXT,
        OK,
        RAISE,
        SCALARS,
        TAG_ATTRS,
        TAG_DEVICE,
        TAG_DTYPE,
        TAG_FROZENSET,
        TAG_GENERATOR,
        TAG_GRAPH,
        TAG_HANDLE,
        TAG_LIBRARY,
        TAG_LIST,
        TAG_MAPPING,
        TAG_MODULE,
        TAG_NUMPY_ARRAY,
        TAG_NUMPY_SCALAR,
        TAG_OPAQUE,
        TAG_RECORD,
        TAG_REF,
        TAG_SET,
        TAG_SIZE,
        TAG_TENSOR,
        TAG_TUPLE,
    )
    from course.grading.kernel.wire_encode import pack, receive_frame, send_frame
    from course.grading.kernel.sealed import _SEALED


class _Server:
    def __init__(self, namespace):
        self.namespace = namespace
        self.handles = {}       # number -> object kept here for the grader
        self.numbers = {}       # id(object) -> its number
        self.nodes = []         # the arguments of the request being served
        self.node_ids = {}      # id(argument) -> its index in self.nodes
        # The arguments of earlier requests of this test whose answer left an object here that may hold
        # on to them (split_model's model keeps the test's layers): their state goes back after every request.
        self.kept = []
        self.escaped = False
        self.files_root = None  # the test's folder, at the path the judge has it (course.grading.verdicts.mirror)
        self.files_known = {}   # relative path -> (size, mtime) when it last crossed

    # -- the test's files (course.grading.verdicts.mirror is the judge's side) -------------------------------------

    def files_in(self, files):
        root = files["root"]
        if root != self.files_root:
            self.files_root, self.files_known = root, {}
        _os.makedirs(root, exist_ok=True)
        for rel in files["dirs"]:
            _os.makedirs(_os.path.join(root, rel), exist_ok=True)
        for rel, data in files["put"]:
            path = _os.path.join(root, rel)
            with open(path, "wb") as f:
                f.write(data)
            info = _os.stat(path)
            self.files_known[rel] = (info.st_size, info.st_mtime_ns)

    def files_out(self):
        """The regular files of the test's folder that changed here since they last crossed, with their bytes."""
        changed, total = [], 0
        root = self.files_root
        if root is None or not _os.path.isdir(root):
            return changed
        for folder, dirs, names in _os.walk(root):
            for name in names:
                path = _os.path.join(folder, name)
                try:
                    info = _os.lstat(path)
                except OSError:
                    continue
                rel = _os.path.relpath(path, root)
                signature = (info.st_size, info.st_mtime_ns)
                if not _stat.S_ISREG(info.st_mode) or self.files_known.get(rel) == signature:
                    continue
                total += info.st_size
                if total > (48 << 20) or len(changed) >= 256:
                    return changed
                with open(path, "rb") as f:
                    changed.append([rel, f.read()])
                self.files_known[rel] = signature
        return changed

    # -- values out -------------------------------------------------------------------------

    def handle(self, obj):
        number = self.numbers.get(id(obj))
        if number is None or self.handles.get(number) is not obj:
            number = len(self.handles) + 1
            self.handles[number], self.numbers[id(obj)] = obj, number
        self.escaped = True
        classes = [f"{getattr(c, '__module__', '')}.{getattr(c, '__qualname__', '')}" for c in type(obj).__mro__]
        return (TAG_HANDLE, number, type(obj).__name__, callable(obj), [c for c in classes if type(c) is str])

    def tensor(self, t, depth):
        plain = t.detach()
        device = str(plain.device)
        shape = tuple(int(n) for n in plain.shape)
        if plain.device.type == "meta":
            data = _torch.empty(0, dtype=plain.dtype)
        else:
            data = plain.to("cpu").as_subclass(_torch.Tensor).clone().contiguous()
        grad = t.grad if t.is_leaf and t.requires_grad else None
        return (TAG_TENSOR, data, shape, device, bool(t.requires_grad), self.out(grad, depth + 1) if grad is not None else None,
                isinstance(t, _torch.nn.Parameter))

    def library(self, obj):
        """(TAG_LIBRARY, module, qualname) when `obj` is a library's own object, reachable by that name."""
        module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
        if type(module) is not str or type(qualname) is not str or module.split(".")[0] not in LIBRARIES:
            return None
        for home in (_SEALED.modules.get(module), _sys.modules.get(module)):    # a sealed probe's record, or not
            found = home
            for part in qualname.split("."):
                found = getattr(found, part, None)
            if home is not None and found is obj:
                return (TAG_LIBRARY, module, qualname)
        return None

    def out(self, value, depth=0):
        if depth > 60:
            return self.handle(value)
        kind = type(value)
        if kind in SCALARS:
            return value
        index = self.node_ids.get(id(value))
        if index is not None and self.nodes[index] is value:
            return (TAG_REF, index)
        if isinstance(value, _torch.Tensor):
            if kind not in (_torch.Tensor, _torch.nn.Parameter):
                value = _torch.Tensor.as_subclass(value, _torch.Tensor)    # a subclass: its values, plainly
            if value.is_sparse or value.layout != _torch.strided:
                return self.handle(value)      # an odd layout
            if value.grad_fn is not None and value.device.type != "meta":
                # Its values, for the grader to compute with, and the tensor itself, kept here for its backward
                # pass (course.grading.verdicts.remote._graph_values).
                return (TAG_GRAPH, self.tensor(value, depth), self.handle(value))
            if value.grad_fn is not None:
                return self.handle(value)
            return self.tensor(value, depth)
        if kind is _torch.device:
            return (TAG_DEVICE, str(value))
        if kind is _torch.dtype:
            return (TAG_DTYPE, str(value).removeprefix("torch."))
        if kind is _torch.Size:
            return (TAG_SIZE, [int(n) for n in value])
        if kind is tuple:
            return (TAG_TUPLE, [self.out(v, depth + 1) for v in value])
        if kind is list:
            return (TAG_LIST, [self.out(v, depth + 1) for v in value])
        if kind is set or kind is frozenset:
            return (TAG_SET if kind is set else TAG_FROZENSET, [self.out(v, depth + 1) for v in value])
        if kind is dict or kind.__module__ == "collections" and kind.__name__ in ("OrderedDict", "defaultdict"):
            return (TAG_MAPPING, [[self.out(k, depth + 1), self.out(v, depth + 1)] for k, v in value.items()], kind.__name__)
        if kind.__name__ == "module" and isinstance(value, type(_sys)):
            name = getattr(value, "__name__", None)
            if type(name) is str and _sys.modules.get(name) is value and name.split(".")[0] in LIBRARIES:
                return (TAG_MODULE, name)
            return self.handle(value)
        plain = self.plain(value, depth)
        if plain is not None:
            return plain
        if _dataclasses.is_dataclass(value) and not isinstance(value, type):
            found = self.library(type(value))       # a record of the course's probes (helpers' own dataclass)
            if found:
                return (TAG_RECORD, found[1], found[2],
                        [[f.name, self.out(getattr(value, f.name), depth + 1)] for f in _dataclasses.fields(value)])
        if isinstance(value, type):     # a library's class is the grader's own; a function runs here
            found = self.library(value)
            if found:
                return found
        return self.handle(value)

    @staticmethod
    def numpy_value(value):
        """(TAG_NUMPY_SCALAR, dtype, number) or (TAG_NUMPY_ARRAY, tensor) for numpy's numbers and numeric arrays, else None."""
        np = _sys.modules.get("numpy")
        if np is None or not isinstance(value, (np.generic, np.ndarray)) or value.dtype.kind not in "biufc":
            return None
        if isinstance(value, np.generic):
            return (TAG_NUMPY_SCALAR, str(value.dtype), value.item())
        try:
            return (TAG_NUMPY_ARRAY, _torch.from_numpy(np.ascontiguousarray(value)).clone())
        except (TypeError, RuntimeError):        # a dtype torch does not have
            return None

    def plain(self, value, depth):
        """A subclass of a plain type (numpy's float64, a namedtuple, an IntEnum) as the plain value it is,
        read through the base type's own methods, or numpy's numbers; None for anything else."""
        found = self.numpy_value(value)
        if found is not None:
            return found
        for base, read in ((int, int.__int__), (float, float.__float__), (complex, complex.__complex__),
                           (str, str.__str__), (bytes, bytes.__bytes__)):
            if isinstance(value, base):
                return read(value)
        if isinstance(value, tuple) and not isinstance(value, _torch.Size):
            return (TAG_TUPLE, [self.out(v, depth + 1) for v in tuple.__iter__(value)])
        if isinstance(value, list):
            return (TAG_LIST, [self.out(v, depth + 1) for v in list.__iter__(value)])
        return None

    def state(self, node):
        """What the grader needs to bring its copy of argument `node` up to date."""
        if isinstance(node, _torch.Tensor):
            plain = node.detach()
            return self.tensor(node, 0) if plain.layout == _torch.strided else (TAG_OPAQUE,)
        if type(node) is list:
            return (TAG_LIST, [self.out(v, 1) for v in node])
        if isinstance(node, dict):
            return (TAG_MAPPING, [[self.out(k, 1), self.out(v, 1)] for k, v in node.items()], type(node).__name__)
        if isinstance(node, _torch.Generator):
            return (TAG_GENERATOR, node.get_state())
        attrs = getattr(node, "__dict__", None)
        if type(attrs) is not dict:
            return (TAG_OPAQUE,)
        return (TAG_ATTRS, [[name, self.out(value, 1)] for name, value in attrs.items() if type(name) is str])

    # -- torch's global state ----------------------------------------------------------------

    # The random state (5 kB) travels only when it changed: None stands for "as you last had it".
    last_rng = None

    def global_state(self):
        rng = _torch.get_rng_state()
        sent = None if self.last_rng is not None and _torch.equal(rng, self.last_rng) else rng
        self.last_rng = rng
        autocast = [[d, bool(_torch.is_autocast_enabled(d)), str(_torch.get_autocast_dtype(d)).removeprefix("torch.")]
                    for d in AUTOCAST_DEVICES]
        return [bool(_torch.is_grad_enabled()), sent, str(_torch.get_default_dtype()).removeprefix("torch."),
                autocast, str(_torch.get_default_device())]

    def set_global_state(self, state):
        grad, rng, dtype, autocast, device = state
        _torch.set_grad_enabled(grad)
        if rng is not None:
            _torch.set_rng_state(rng)
        self.last_rng = _torch.get_rng_state()
        _torch.set_default_dtype(getattr(_torch, dtype))
        for where, enabled, kind in autocast:
            _torch.set_autocast_enabled(where, enabled)
            _torch.set_autocast_dtype(where, getattr(_torch, kind))
        _torch.set_default_device(None if device == "cpu" else device)

    # -- requests ------------------------------------------------------------------------------

    def answer(self, request):
        op = request["op"]
        self.nodes = request.get("nodes", [])
        self.node_ids = {id(n): i for i, n in enumerate(self.nodes)}
        escaped = False
        try:
            for index, grad in request.get("grads", []):
                self.nodes[index].grad = grad       # pickling a tensor leaves its .grad behind
            if "global" in request:
                self.set_global_state(request["global"])
            if "files" in request:
                self.files_in(request["files"])
            if op == "name":
                name = request["name"]
                if name not in self.namespace:
                    raise NameError(f"name {name!r} is not defined")
                result = self.namespace[name]
            elif op == "call":
                result = request["target"](*request["args"], **request["kwargs"])
            elif op == "method":
                target, name = request["target"], request["name"]
                if name.startswith("__"):       # an operator: looked up on the type, as Python does
                    method = getattr(type(target), name, None)
                    if method is None:
                        raise TypeError(f"{type(target).__name__!r} object does not support {name}")
                    result = method(target, *request["args"], **request["kwargs"])
                else:
                    result = getattr(target, name)(*request["args"], **request["kwargs"])
            elif op == "getattr":
                result = getattr(request["target"], request["name"])
            elif op == "setattr":
                setattr(request["target"], request["name"], request["value"])
                result = None
            else:
                raise ValueError(f"unknown request {op!r}")
            self.escaped = False
            reply = [OK, self.out(result)]
            escaped = self.escaped
        except KeyboardInterrupt:       # the grader interrupts a call that ran out of time
            raise
        except BaseException as error:  # noqa: BLE001 - every failure goes back to the grader as data
            names = [c.__name__ for c in type(error).__mro__ if isinstance(getattr(c, "__name__", None), str)]
            reply = [RAISE, names, str(error)[:MAX_EXCEPTION_TEXT]]
        nodes = self.nodes
        reply.append(self.states(nodes))
        reply.append([self.states(kept) for kept in self.kept])
        reply.append(self.global_state())
        reply.append(self.files_out())
        if escaped:
            self.keep(nodes)
        self.nodes, self.node_ids = [], {}
        return reply

    def keep(self, nodes):
        """Keep `nodes` in sync after later requests (course.grading.verdicts.connection.keep does the same on the grader's side)."""
        if any(not isinstance(node, _torch.Tensor) for node in nodes):
            self.kept.append(nodes)
            del self.kept[:-64]

    def states(self, nodes):
        """The state of each of `nodes`, references numbered within `nodes`; [] if one cannot be read."""
        self.nodes, self.node_ids = nodes, {id(n): i for i, n in enumerate(nodes)}
        try:
            return [self.state(node) for node in nodes]
        except Exception:  # noqa: BLE001 - arguments whose state cannot be read come back unchanged
            return []


class _Unpickler(_pickle.Unpickler):
    """The grader's requests: its own objects by value, the objects kept here by number, and the course's probes
    (what `helpers` defines) from the copy sealed when the kernel started."""

    def __init__(self, data, server):
        super().__init__(_io.BytesIO(data))
        self.server = server

    def persistent_load(self, pid):
        return self.server.handles[pid]

    def find_class(self, module, name):
        if _SEALED.holds(module):
            return _SEALED.find(module, name)
        return super().find_class(module, name)


def _course_serve(path, namespace):
    server = _SERVERS.setdefault("server", _Server(namespace))
    server.namespace, server.last_rng, server.kept = namespace, None, []
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.connect(path)
    try:
        send_frame(sock, pack([HELLO, server.global_state()]))
        while True:
            data = receive_frame(sock)
            if data == END:
                server.set_global_state(_pickle.loads(receive_frame(sock)))
                return
            try:
                reply = server.answer(_Unpickler(data, server).load())
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as error:  # noqa: BLE001 - a request that could not be read
                reply = [RAISE, [type(error).__name__], str(error)[:MAX_EXCEPTION_TEXT], [], [], server.global_state(), []]
            try:
                data = pack(reply)
            except Exception as error:  # noqa: BLE001 - something in the answer that is not data
                data = pack([RAISE, ["TypeError", "Exception"], f"the answer could not be sent: {error}"[:MAX_EXCEPTION_TEXT],
                             [], [], server.global_state(), []])
            send_frame(sock, data)
    finally:
        sock.close()


_SERVERS = {}       # this module is loaded once per kernel (see course.grading.kernel.loading.load_code)

# Unpickling a tensor imports parts of torch on first use: let that happen now, when the kernel starts
# (course.grading.kernel.loading.load_code), not in the middle of a test, after student code has run.
_pickle.loads(_pickle.dumps((_torch.zeros(1), _torch.nn.Linear(1, 1))))
