# Mistake: returns how many bytes are missing instead of True / False.
def needs_model_parallel(num_params, gpu_bytes):
    return max(0, 16 * num_params - gpu_bytes)
