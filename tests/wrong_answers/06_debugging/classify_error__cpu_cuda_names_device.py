# Mistake: any message that names "cpu" or "cuda" is a device error, so a dtype error from a kernel named "lu_cpu" or "bincount_cpu" is called a device error.
def classify_error(exc):
    """The kind of mismatch the message of `exc` reports: "shape", "device", "dtype" or "other"."""
    message = str(exc).lower()
    if any(word in message for word in ("device", "cpu", "cuda")):
        return "device"
    if any(word in message for word in ("dtype", "scalar type", "should be the same", "can't be cast",
                                        "not implemented for", "indices must be long")):
        return "dtype"
    if "out of bounds" in message or "index out of range" in message:
        return "other"
    if any(word in message for word in ("shape", "size", "dimension", "channels", "elements")):
        return "shape"
    return "other"
