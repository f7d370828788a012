# Mistake: reads max_memory_reserved (what nvidia-smi sees: the allocator's cached blocks), not the bytes tensors used.
def peak_cuda_memory(fn):
    if not torch.cuda.is_available():
        raise RuntimeError("peak_cuda_memory needs CUDA")
    torch.cuda.reset_peak_memory_stats()
    fn()
    return torch.cuda.max_memory_reserved()
