# Mistake: "the result is the bigger size" - wrong for empty axes, where 0 and 1 give 0.
def broadcast_shape(shape_a, shape_b):
    width = max(len(shape_a), len(shape_b))
    a = (1,) * (width - len(shape_a)) + tuple(shape_a)
    b = (1,) * (width - len(shape_b)) + tuple(shape_b)
    result = []
    for size_a, size_b in zip(a, b):
        if size_a != size_b and size_a != 1 and size_b != 1:
            raise ValueError("not broadcastable")
        result.append(max(size_a, size_b))
    return tuple(result)
