# Mistake: believes Adam keeps one extra copy per parameter (like momentum SGD) instead of two.
def adam_training_bytes(num_params, bytes_per_value=4):
    weights = gradients = num_params * bytes_per_value
    adam_state = num_params * bytes_per_value
    return weights + gradients + adam_state
