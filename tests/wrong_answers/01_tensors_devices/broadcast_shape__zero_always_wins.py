# Mistake: reads "0 and 1 broadcast to 0" as "0 broadcasts with anything", so (0,) with (3,) gives (0,) instead of an error.
def broadcast_shape(shape_a, shape_b):
    """Return the shape that broadcasting `shape_a` with `shape_b` gives, as a tuple of ints.

    Raise ValueError when the two shapes are not broadcastable.
    """
    width = max(len(shape_a), len(shape_b))
    a = (1,) * (width - len(shape_a)) + tuple(shape_a)
    b = (1,) * (width - len(shape_b)) + tuple(shape_b)
    result = []
    for size_a, size_b in zip(a, b):
        if size_a == 0 or size_b == 0:
            result.append(0)
        elif size_a == size_b or size_b == 1:
            result.append(size_a)
        elif size_a == 1:
            result.append(size_b)
        else:
            raise ValueError(f"{size_a} vs {size_b}")
    return tuple(result)
