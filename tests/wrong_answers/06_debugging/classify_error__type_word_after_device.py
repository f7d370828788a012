# Mistake: checks device first (as asked) but then takes any "type" in the message as a dtype sign, so "must be Tensor, not NoneType" (a None passed to a layer) is called a dtype error.
def classify_error(exc):
    """The kind of mismatch the message of `exc` reports: "shape", "device", "dtype" or "other"."""
    message = str(exc).lower()
    if "device" in message:
        return "device"
    if any(word in message for word in ("dtype", "type", "can't be cast", "not implemented for",
                                        "indices must be long")):
        return "dtype"
    if "out of bounds" in message or "index out of range" in message:
        return "other"
    if any(word in message for word in ("shape", "size", "dimension", "channels", "elements")):
        return "shape"
    return "other"
