# Mistake: Adam counted as one extra copy, like momentum (it keeps exp_avg AND exp_avg_sq).
def training_state_bytes(model, optimizer_name):
    copies = {"sgd": 0, "momentum": 1, "adam": 1, "adamw": 1}
    if optimizer_name not in copies:
        raise ValueError(f"unknown optimizer {optimizer_name!r}")
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    trainable = sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
    return weights + trainable * (1 + copies[optimizer_name])
