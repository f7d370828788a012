# Mistake: no check for CUDA: on a CPU-only machine it fails with a confusing error, or reads a meaningless 0.
def peak_cuda_memory(fn):
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    fn()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated()
