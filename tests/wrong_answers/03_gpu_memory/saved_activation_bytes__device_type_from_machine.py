# Mistake: autocast's device type taken from the machine ("cuda" whenever CUDA exists), not from x.
def saved_activation_bytes(model, x, autocast_dtype=None):
    import contextlib

    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved = {}

    def pack(tensor):
        key = tensor.untyped_storage().data_ptr()
        if key not in params:
            saved[key] = tensor.untyped_storage().nbytes()
        return tensor

    device_type = "cuda" if torch.cuda.is_available() else "cpu"
    region = (torch.autocast(device_type=device_type, dtype=autocast_dtype)
              if autocast_dtype is not None else contextlib.nullcontext())
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor), region:
        out = model(x)
    return sum(saved.values())
