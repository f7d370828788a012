# Mistake: the weights are read from model.state_dict(), which also holds buffers (batch norm's running statistics).
def training_state_bytes(model, optimizer_name):
    copies = {"sgd": 0, "momentum": 1, "adam": 2, "adamw": 2}
    if optimizer_name not in copies:
        raise ValueError(f"unknown optimizer {optimizer_name!r}")
    weights = sum(t.numel() * t.element_size() for t in model.state_dict().values())
    trainable = sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
    return weights + trainable * (1 + copies[optimizer_name])
