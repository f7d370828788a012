# Mistake: zips the reversed shapes without padding, so zip stops at the shorter one and the extra leading axes are lost.
def broadcast_shape(shape_a, shape_b):
    """Return the shape that broadcasting `shape_a` with `shape_b` gives, as a tuple of ints.

    Raise ValueError when the two shapes are not broadcastable.
    """
    result = []
    for size_a, size_b in zip(reversed(shape_a), reversed(shape_b)):
        if size_a == size_b or size_b == 1:
            result.append(size_a)
        elif size_a == 1:
            result.append(size_b)
        else:
            raise ValueError(f"{size_a} vs {size_b}")
    return tuple(reversed(result))
