# Mistake: counts the numbers stored (4 per parameter) and never multiplies by the bytes per number.
def adam_training_bytes(num_params, bytes_per_value=4):
    return 4 * num_params
