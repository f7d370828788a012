# Mistake: counts the weights and their gradients but forgets Adam's two state tensors.
def adam_training_bytes(num_params, bytes_per_value=4):
    return 2 * num_params * bytes_per_value
