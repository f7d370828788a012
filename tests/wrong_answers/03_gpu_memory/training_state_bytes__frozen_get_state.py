# Mistake: frozen parameters (requires_grad=False) are given gradients and optimizer state too.
def training_state_bytes(model, optimizer_name):
    copies = {"sgd": 0, "momentum": 1, "adam": 2, "adamw": 2}
    if optimizer_name not in copies:
        raise ValueError(f"unknown optimizer {optimizer_name!r}")
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    return weights * (2 + copies[optimizer_name])
