# Mistake: a dtype error must say "dtype", so "Input type (double) and bias type (float) should be the same", "can't be cast" and "not implemented for 'BFloat16'" are missed.
def classify_error(exc):
    """The kind of mismatch the message of `exc` reports: "shape", "device", "dtype" or "other"."""
    message = str(exc).lower()
    if "device" in message:
        return "device"
    if "dtype" in message:
        return "dtype"
    if "out of bounds" in message or "index out of range" in message:
        return "other"
    if any(word in message for word in ("shape", "size", "dimension", "channels", "elements")):
        return "shape"
    return "other"
