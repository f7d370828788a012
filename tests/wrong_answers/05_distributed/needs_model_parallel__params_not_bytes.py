# Mistake: compares the number of parameters with the number of bytes.
def needs_model_parallel(num_params, gpu_bytes):
    return num_params > gpu_bytes
