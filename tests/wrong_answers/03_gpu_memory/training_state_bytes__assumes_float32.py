# Mistake: 4 bytes per number assumed, whatever the parameters' dtype.
def training_state_bytes(model, optimizer_name):
    copies = {"sgd": 0, "momentum": 1, "adam": 2, "adamw": 2}
    if optimizer_name not in copies:
        raise ValueError(f"unknown optimizer {optimizer_name!r}")
    weights = sum(p.numel() * 4 for p in model.parameters())
    trainable = sum(p.numel() * 4 for p in model.parameters() if p.requires_grad)
    return weights + trainable * (1 + copies[optimizer_name])
