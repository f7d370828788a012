# Mistake: recognises a dtype error by a few dtype names but neither by the word dtype nor by Int, so "gather(): Expected dtype int32/int64 for index" is not called a dtype error.
def classify_error(exc):
    """The kind of mismatch the message of `exc` reports: "shape", "device", "dtype" or "other"."""
    message = str(exc).lower()
    if "device" in message:
        return "device"
    if any(word in message for word in ("float", "double", "half", "long", "bfloat16", "byte", "bool")):
        return "dtype"
    if "out of bounds" in message or "index out of range" in message:
        return "other"
    if any(word in message for word in ("shape", "size", "dimension", "channels", "elements")):
        return "shape"
    return "other"
