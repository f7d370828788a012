# Mistake: treats every "out of range" as a value out of range, so "Dimension out of range" (asking for a dimension the tensor does not have) is called "other" instead of "shape".
def classify_error(exc):
    """The kind of mismatch the message of `exc` reports: "shape", "device", "dtype" or "other"."""
    message = str(exc).lower()
    if "device" in message:
        return "device"
    if any(word in message for word in ("dtype", "scalar type", "should be the same", "can't be cast",
                                        "not implemented for", "indices must be long")):
        return "dtype"
    if "out of bounds" in message or "out of range" in message:
        return "other"
    if any(word in message for word in ("shape", "size", "dimension", "channels", "elements")):
        return "shape"
    return "other"
