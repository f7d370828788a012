# Mistake: hard-codes float32's 16 bytes per parameter and ignores bytes_per_value.
def adam_training_bytes(num_params, bytes_per_value=4):
    return 16 * num_params
