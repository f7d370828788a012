# Mistake: compares tensors, so the answer is a 0-dim bool tensor instead of a Python bool.
def needs_model_parallel(num_params, gpu_bytes):
    return torch.tensor(16 * num_params) > gpu_bytes
