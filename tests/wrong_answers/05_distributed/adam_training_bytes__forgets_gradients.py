# Mistake: counts the weights and Adam's two averages but forgets the gradients.
def adam_training_bytes(num_params, bytes_per_value=4):
    return 3 * num_params * bytes_per_value
