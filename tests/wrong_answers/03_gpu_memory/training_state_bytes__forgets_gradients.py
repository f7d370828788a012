# Mistake: weights and optimizer state only; the gradients (one more copy) are forgotten.
def training_state_bytes(model, optimizer_name):
    copies = {"sgd": 0, "momentum": 1, "adam": 2, "adamw": 2}
    if optimizer_name not in copies:
        raise ValueError(f"unknown optimizer {optimizer_name!r}")
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    trainable = sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
    return weights + trainable * copies[optimizer_name]
