# Mistake: memory_allocated() after fn is what is left now, not the peak reached while fn ran.
def peak_cuda_memory(fn):
    if not torch.cuda.is_available():
        raise RuntimeError("peak_cuda_memory needs CUDA")
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    fn()
    torch.cuda.synchronize()
    return torch.cuda.memory_allocated()
