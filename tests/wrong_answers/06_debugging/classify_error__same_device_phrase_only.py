# Mistake: recognises a device error only by the GPU phrase "same device", so the CPU / meta message "is not on the expected device" falls through.
def classify_error(exc):
    """The kind of mismatch the message of `exc` reports: "shape", "device", "dtype" or "other"."""
    message = str(exc).lower()
    if "same device" in message:
        return "device"
    if any(word in message for word in ("dtype", "scalar type", "should be the same", "can't be cast",
                                        "not implemented for", "indices must be long")):
        return "dtype"
    if "out of bounds" in message or "index out of range" in message:
        return "other"
    if any(word in message for word in ("shape", "size", "dimension", "channels", "elements")):
        return "shape"
    return "other"
