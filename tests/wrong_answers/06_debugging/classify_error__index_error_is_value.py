# Mistake: decides by the exception class: every IndexError is a value out of range ("other"), so a float index (dtype), a mask of the wrong length and "Dimension out of range" (shape) are misread.
def classify_error(exc):
    """The kind of mismatch the message of `exc` reports: "shape", "device", "dtype" or "other"."""
    if isinstance(exc, IndexError):
        return "other"
    message = str(exc).lower()
    if "device" in message:
        return "device"
    if any(word in message for word in ("dtype", "scalar type", "should be the same", "can't be cast",
                                        "not implemented for")):
        return "dtype"
    if any(word in message for word in ("shape", "size", "dimension", "channels", "elements")):
        return "shape"
    return "other"
