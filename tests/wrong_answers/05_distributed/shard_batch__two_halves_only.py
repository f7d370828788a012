# Mistake: written for two GPUs: always cuts the batch in two halves, whatever world_size is.
def shard_batch(x, y, world_size):
    if len(x) % world_size:
        raise ValueError("the batch does not divide evenly")
    half = len(x) // 2
    return [(x[:half], y[:half]), (x[half:], y[half:])]
