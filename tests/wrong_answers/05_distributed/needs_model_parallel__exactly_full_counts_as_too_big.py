# Mistake: uses >= so a model whose state exactly fills the GPU is said not to fit.
def needs_model_parallel(num_params, gpu_bytes):
    return 16 * num_params >= gpu_bytes
