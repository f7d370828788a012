# Mistake: autocast_dtype is accepted but never used: the forward pass always runs in float32.
def saved_activation_bytes(model, x, autocast_dtype=None):
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved = {}

    def pack(tensor):
        key = tensor.untyped_storage().data_ptr()
        if key not in params:
            saved[key] = tensor.untyped_storage().nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        out = model(x)
    return sum(saved.values())
