# Mistake: divides by a float constant, so the byte count comes back as a float.
def adam_training_bytes(num_params, bytes_per_value=4):
    return num_params * bytes_per_value * 16 / 4.0
