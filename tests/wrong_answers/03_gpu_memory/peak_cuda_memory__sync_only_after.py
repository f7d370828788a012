# Mistake: synchronizes after fn but not before the reset, so earlier unfinished work lands in the window.
def peak_cuda_memory(fn):
    if not torch.cuda.is_available():
        raise RuntimeError("peak_cuda_memory needs CUDA")
    torch.cuda.reset_peak_memory_stats()
    fn()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated()
