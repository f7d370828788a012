# Mistake: parameters and optimizer state only; the .grad tensors are memory too.
def measured_state_bytes(model, optimizer):
    total = sum(p.numel() * p.element_size() for p in model.parameters())
    for per_param in optimizer.state.values():
        for value in per_param.values():
            if torch.is_tensor(value):
                total += value.numel() * value.element_size()
    return total
