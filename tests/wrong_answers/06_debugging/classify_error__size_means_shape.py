# Mistake: any message that mentions a size or a dimension is a shape error, so an index or label out of bounds ("index 5 is out of bounds for dimension 0 with size 3") is called a shape error.
def classify_error(exc):
    """The kind of mismatch the message of `exc` reports: "shape", "device", "dtype" or "other"."""
    message = str(exc).lower()
    if "device" in message:
        return "device"
    if any(word in message for word in ("dtype", "scalar type", "should be the same", "can't be cast",
                                        "not implemented for", "indices must be long")):
        return "dtype"
    if any(word in message for word in ("shape", "size", "dimension", "channels", "elements", "bounds")):
        return "shape"
    return "other"
