# Mistake: recognises a dtype error by the dtype names it mentions (float, double, half, long, ...) instead of the signs listed in the exercise.
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
