# Mistake: counts weights and gradients (8 bytes per parameter) but forgets Adam's two state tensors.
def needs_model_parallel(num_params, gpu_bytes):
    return 8 * num_params > gpu_bytes
