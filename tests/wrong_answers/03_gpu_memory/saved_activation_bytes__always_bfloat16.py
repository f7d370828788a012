# Mistake: autocast runs in bfloat16 whatever autocast_dtype asks for (float16 on a GPU, for example).
def saved_activation_bytes(model, x, autocast_dtype=None):
    import contextlib

    parameter_memory = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved = {}

    def pack(tensor):
        key = tensor.untyped_storage().data_ptr()
        if key not in parameter_memory:
            saved[key] = tensor.untyped_storage().nbytes()
        return tensor

    region = (torch.autocast(device_type=x.device.type, dtype=torch.bfloat16) if autocast_dtype is not None
              else contextlib.nullcontext())
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), region:
        model(x)
    return sum(saved.values())
