# Mistake: lines the shapes up from the left (pads the shorter one at the end).
def broadcast_shape(shape_a, shape_b):
    width = max(len(shape_a), len(shape_b))
    a = tuple(shape_a) + (1,) * (width - len(shape_a))
    b = tuple(shape_b) + (1,) * (width - len(shape_b))
    result = []
    for size_a, size_b in zip(a, b):
        if size_a != size_b and 1 not in (size_a, size_b):
            raise ValueError("not broadcastable")
        result.append(max(size_a, size_b))
    return tuple(result)
