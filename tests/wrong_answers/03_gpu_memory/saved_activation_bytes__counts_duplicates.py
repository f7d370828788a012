# Mistake: every save is counted, so a tensor saved twice (a ReLU output) is counted twice.
def saved_activation_bytes(model, x, autocast_dtype=None):
    import contextlib

    params = {p.data_ptr() for p in model.parameters()}
    sizes = []

    def pack(tensor):
        if tensor.data_ptr() not in params:
            sizes.append(tensor.numel() * tensor.element_size())
        return tensor

    region = (torch.autocast(device_type=x.device.type, dtype=autocast_dtype)
              if autocast_dtype is not None else contextlib.nullcontext())
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor), region:
        out = model(x)
    return sum(sizes)
