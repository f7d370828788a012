# Mistake: checks dtype before device and takes the word "type" as a dtype sign, so "can't convert meta device type tensor to numpy" is called a dtype error.
def classify_error(exc):
    """The kind of mismatch the message of `exc` reports: "shape", "device", "dtype" or "other"."""
    message = str(exc).lower()
    if any(word in message for word in ("dtype", "type", "can't be cast", "not implemented for",
                                        "indices must be long")):
        return "dtype"
    if "device" in message:
        return "device"
    if "out of bounds" in message or "index out of range" in message:
        return "other"
    if any(word in message for word in ("shape", "size", "dimension", "channels", "elements")):
        return "shape"
    return "other"
