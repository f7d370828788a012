"""The protocol between the judge and the answer server in the student's kernel: one definition of
everything both sides must agree on. The judge imports this module; the kernel, which has no `course`
package, gets its text run in the answer server's namespace just before the server's own
(`course.grading.kernel.loading.load_code`). Standard library only.

One test's conversation, over one unix socket; every message is framed by HEADER (its length):

    kernel -> judge   answer [HELLO, global state]
    judge  -> kernel  a pickle of {"op": one of OPS, "target", "name", "args", "kwargs", "value",
                      "nodes", "grads", "global", "files"}, the kernel's own objects named by number
    kernel -> judge   answer [OK, value, states, kept states, global state, files]
                   or answer [RAISE, exception class names, message, states, kept states, global state, files]
                      (request and reply repeat until the test is over)
    judge  -> kernel  END, then a pickle of the judge's global state

An answer (`wire_encode.pack`, read by `course.grading.verdicts.wire_decode.decode`) is data only: MAGIC, the
length of a JSON header (4 bytes), the header, then the raw bytes of its tensors. Inside the JSON, WIRE_*
keys mark what JSON has no type for. Above that layer, a value is a plain scalar or a tuple whose first
item is one of the TAG_* below; `states` hold one tagged state per argument the judge listed ("nodes"),
`kept states` the same for the argument lists kept in sync (at most MAX_KEPT, the oldest dropped first).

The global state is [grad mode, random state (None: unchanged), default dtype,
[[device, autocast on, autocast dtype] for each of AUTOCAST_DEVICES], default device].
"""

import struct

HEADER = struct.Struct("!Q")        # a message's length, before it
MAGIC = b"CW1"                      # the first bytes of every answer
MAX_ANSWER = 64 << 20               # bytes one answer may take
MAX_EXCEPTION_TEXT = 10_000         # characters of an exception's message the kernel sends
MAX_KEPT = 64                       # argument lists kept in sync at once

# The conversation's fixed words.
HELLO, OK, RAISE = "hello", "ok", "raise"
END = b"end"
OPS = ("name", "call", "method", "getattr", "setattr")

# The JSON layer of an answer (a one-key object).
WIRE_TUPLE, WIRE_DICT, WIRE_COMPLEX, WIRE_FLOAT, WIRE_BYTES, WIRE_TENSOR = "$u", "$d", "$c", "$f", "$b", "$t"

# Tagged values: ("R", index) and so on. What follows each tag is what the decoder checks, item by item.
TAG_REF = "R"           # (index): one of the judge's own arguments, back again
TAG_HANDLE = "H"        # (number, type name, callable, [module.qualname of its classes]): stays in the kernel
TAG_TENSOR = "T"        # (values, shape, device, requires_grad, grad or None, is a Parameter)
TAG_GRAPH = "TG"        # (TAG_TENSOR value, TAG_HANDLE of the tensor itself): values plus the kernel's graph
TAG_DEVICE = "D"        # (str)
TAG_DTYPE = "DT"        # (name)
TAG_SIZE = "S"          # ([int])
TAG_TUPLE = "tuple"     # ([values])
TAG_LIST = "L"          # ([values])
TAG_SET = "set"         # ([values])
TAG_FROZENSET = "fset"  # ([values])
TAG_MAPPING = "M"       # ([[key, value]], "dict" | "OrderedDict" | "defaultdict")
TAG_MODULE = "MOD"      # (name): a library module the judge has imported itself
TAG_LIBRARY = "G"       # (module, qualname): a library's class, the judge's own
TAG_RECORD = "DC"       # (module, qualname, [[field, value]]): a dataclass record of the course's probes
TAG_NUMPY_SCALAR = "NPS"    # (dtype, number)
TAG_NUMPY_ARRAY = "NPA"     # (tensor of its values)
# Tags of an argument's state only.
TAG_OPAQUE = "X"        # (): nothing to bring back
TAG_GENERATOR = "GEN"   # (state tensor)
TAG_ATTRS = "A"         # ([[name, value]]): an object's attributes

SEQUENCES = {TAG_TUPLE: tuple, TAG_LIST: list, TAG_SET: set, TAG_FROZENSET: frozenset}

SCALARS = (type(None), bool, int, float, complex, str, bytes)
# Modules whose objects the judge takes from its own imports when an answer names them (never imported on
# the kernel's word: only those the judge has already), and the ones whose classes a record may be.
LIBRARIES = ("torch", "numpy", "math", "collections", "functools", "itertools", "operator", "helpers",
             "builtins", "typing", "random", "copy", "os", "pathlib", "tempfile", "matplotlib")
CLASS_LIBRARIES = ("torch", "numpy", "helpers", "collections", "builtins", "typing")

AUTOCAST_DEVICES = ("cpu", "cuda")
DTYPES = ("float32", "float64", "float16", "bfloat16")     # a default dtype or autocast dtype that may travel
