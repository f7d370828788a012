# Mistake: no synchronize: the peak is read while the GPU may still be running fn's work.
def peak_cuda_memory(fn):
    if not torch.cuda.is_available():
        raise RuntimeError("peak_cuda_memory needs CUDA")
    torch.cuda.reset_peak_memory_stats()
    fn()
    return torch.cuda.max_memory_allocated()
