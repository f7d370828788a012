# Mistake: shards the inputs but gives every replica all of the targets.
def shard_batch(x, y, world_size):
    if len(x) % world_size:
        raise ValueError("the batch does not divide evenly")
    size = len(x) // world_size
    return [(x[i * size:(i + 1) * size], y) for i in range(world_size)]
