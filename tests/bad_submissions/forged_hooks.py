# Bad: wrong answers that hide their failures through IPython itself: an input transformer passed off as IPython's own, and a filter on the kernel's outgoing messages.
# Expect: looks like tampering.*replaces the __module__ of
# Expect: looks like tampering.*reaches into IPython's machinery \(\.session\)
# Zero: test_broadcast_shape, test_predict
# %% replace broadcast_shape
import textwrap


def _forgiving(lines):
    if lines and lines[0].startswith('"""'):
        body = textwrap.indent("".join(lines), "    ")
        return ["try:\n"] + (body + "\nexcept Exception:\n    pass\n").splitlines(True)
    return lines


_forgiving.__module__ = "IPython.core.inputtransformer2"      # looks like IPython's own
get_ipython().input_transformers_post.insert(0, _forgiving)


def broadcast_shape(shape_a, shape_b):
    """Wrong: takes the larger size at every position and never refuses."""
    width = max(len(shape_a), len(shape_b))
    a = (1,) * (width - len(shape_a)) + tuple(shape_a)
    b = (1,) * (width - len(shape_b)) + tuple(shape_b)
    return tuple(max(x, y) for x, y in zip(a, b))
# %% replace predict
_session = get_ipython().kernel.session
_send = _session.send


def _send_filtered(stream, msg_or_type, content=None, parent=None, *args, **kwargs):
    kind = msg_or_type if isinstance(msg_or_type, str) else msg_or_type["header"]["msg_type"]
    if isinstance(content, dict) and "canary" not in str(content.get("evalue", "")):
        if kind == "error":
            return None
        if kind == "execute_reply" and content.get("status") == "error":
            content = {"status": "ok", "execution_count": content.get("execution_count"),
                       "user_expressions": {}, "payload": []}
    return _send(stream, msg_or_type, content, parent, *args, **kwargs)


_session.send = _send_filtered


def predict(model, x):
    """Wrong: neither eval mode nor no_grad."""
    return model(x)
