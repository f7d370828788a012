# Mistake: checks for shape words first and counts "mat1"/"mat2" as shape words, so a linear layer's dtype error ("mat1 and mat2 must have the same dtype") is called a shape error.
def classify_error(exc):
    """The kind of mismatch the message of `exc` reports: "shape", "device", "dtype" or "other"."""
    message = str(exc).lower()
    if "out of bounds" in message or "index out of range" in message:
        return "other"
    if any(word in message for word in ("mat1", "mat2", "shape", "size", "dimension", "channels", "elements")):
        return "shape"
    if "device" in message:
        return "device"
    if any(word in message for word in ("dtype", "scalar type", "should be the same", "can't be cast",
                                        "not implemented for", "indices must be long")):
        return "dtype"
    return "other"
