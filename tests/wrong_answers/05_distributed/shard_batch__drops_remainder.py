# Mistake: floors the shard size and silently drops the examples left over instead of raising ValueError.
def shard_batch(x, y, world_size):
    size = len(x) // world_size
    return [(x[i * size:(i + 1) * size], y[i * size:(i + 1) * size]) for i in range(world_size)]
