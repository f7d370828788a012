# Mistake: checks only whether the float32 weights fit, forgetting gradients and Adam's state.
def needs_model_parallel(num_params, gpu_bytes):
    return 4 * num_params > gpu_bytes
