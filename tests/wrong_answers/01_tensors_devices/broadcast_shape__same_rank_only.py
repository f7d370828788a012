# Mistake: refuses shapes with different numbers of axes instead of padding the shorter one with 1s on the left.
def broadcast_shape(shape_a, shape_b):
    """Return the shape that broadcasting `shape_a` with `shape_b` gives, as a tuple of ints.

    Raise ValueError when the two shapes are not broadcastable.
    """
    if len(shape_a) != len(shape_b):
        raise ValueError("shapes must have the same number of dimensions")
    result = []
    for size_a, size_b in zip(shape_a, shape_b):
        if size_a == size_b or size_b == 1:
            result.append(size_a)
        elif size_a == 1:
            result.append(size_b)
        else:
            raise ValueError(f"{size_a} vs {size_b}")
    return tuple(result)
