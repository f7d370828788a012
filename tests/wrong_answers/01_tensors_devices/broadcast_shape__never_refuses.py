# Mistake: takes the larger size at every position and never checks compatibility.
def broadcast_shape(shape_a, shape_b):
    width = max(len(shape_a), len(shape_b))
    a = (1,) * (width - len(shape_a)) + tuple(shape_a)
    b = (1,) * (width - len(shape_b)) + tuple(shape_b)
    return tuple(max(x, y) for x, y in zip(a, b))
