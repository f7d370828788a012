# Mistake: an unknown optimizer name silently counts as plain SGD instead of raising ValueError.
def training_state_bytes(model, optimizer_name):
    copies = {"momentum": 1, "adam": 2, "adamw": 2}.get(optimizer_name, 0)
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    trainable = sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
    return weights + trainable * (1 + copies)
