# Mistake: the peak counter is never reset, so an older, larger peak is read.
def peak_cuda_memory(fn):
    if not torch.cuda.is_available():
        raise RuntimeError("peak_cuda_memory needs CUDA")
    torch.cuda.synchronize()
    fn()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated()
