# Mistake: deals the examples out round-robin (x[i::world_size]) instead of contiguous blocks.
def shard_batch(x, y, world_size):
    if len(x) % world_size:
        raise ValueError("the batch does not divide evenly")
    return [(x[i::world_size], y[i::world_size]) for i in range(world_size)]
