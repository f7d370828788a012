# Mistake: the peak statistics are reset after fn has run, so fn's peak is wiped before it is read.
def peak_cuda_memory(fn):
    if not torch.cuda.is_available():
        raise RuntimeError("peak_cuda_memory needs CUDA")
    torch.cuda.synchronize()
    fn()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    return torch.cuda.max_memory_allocated()
