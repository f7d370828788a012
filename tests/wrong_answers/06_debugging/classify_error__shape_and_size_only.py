# Mistake: recognises a shape error only by the words "shape" and "size", so "too many indices for tensor of dimension 1", "Dimension out of range" and channel-count messages are "other".
def classify_error(exc):
    """The kind of mismatch the message of `exc` reports: "shape", "device", "dtype" or "other"."""
    message = str(exc).lower()
    if "device" in message:
        return "device"
    if any(word in message for word in ("dtype", "scalar type", "should be the same", "can't be cast",
                                        "not implemented for", "indices must be long")):
        return "dtype"
    if "out of bounds" in message or "index out of range" in message:
        return "other"
    if "shape" in message or "size" in message:
        return "shape"
    return "other"
