# Mistake: takes every NotImplementedError for a dtype error because "not implemented for 'Half'" is one, so "Cannot copy out of meta tensor; no data!" (a NotImplementedError about missing data) is called a dtype error.
def classify_error(exc):
    """The kind of mismatch the message of `exc` reports: "shape", "device", "dtype" or "other"."""
    import re

    if isinstance(exc, NotImplementedError):
        return "dtype"
    message = str(exc).lower()
    if "device-side assert" in message:
        return "other"
    if "device" in message or len(set(re.findall(r"torch\.(cuda\.)?[a-z0-9]*tensor", message))) > 1:
        return "device"
    dtype_signs = ("dtype", "scalar type", "scalartype", "should be the same", "can't be cast",
                   "not implemented for '", "indices must be long", "of type longtensor")
    if any(sign in message for sign in dtype_signs):
        return "dtype"
    if "out of bounds" in message or "index out of range" in message:
        return "other"
    if any(sign in message for sign in ("shape", "size", "dimension", "channels", "elements", "must match")):
        return "shape"
    return "other"
