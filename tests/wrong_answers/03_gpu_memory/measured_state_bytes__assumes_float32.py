# Mistake: 4 bytes per number for every tensor, whatever its dtype.
def measured_state_bytes(model, optimizer):
    total = 0
    for p in model.parameters():
        total += p.numel() * 4
        if p.grad is not None:
            total += p.grad.numel() * 4
    for per_param in optimizer.state.values():
        for value in per_param.values():
            if torch.is_tensor(value):
                total += value.numel() * 4
    return total
