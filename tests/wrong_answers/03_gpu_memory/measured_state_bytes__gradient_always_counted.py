# Mistake: a gradient counted for every parameter, even when .grad is None (before backward, after zero_grad).
def measured_state_bytes(model, optimizer):
    total = 0
    for p in model.parameters():
        total += 2 * p.numel() * p.element_size()
    for per_param in optimizer.state.values():
        for value in per_param.values():
            if torch.is_tensor(value):
                total += value.numel() * value.element_size()
    return total
