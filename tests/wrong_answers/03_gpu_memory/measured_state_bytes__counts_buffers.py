# Mistake: the weights are read from model.state_dict(), which also holds buffers (batch norm's running statistics).
def measured_state_bytes(model, optimizer):
    total = sum(t.numel() * t.element_size() for t in model.state_dict().values())
    for p in model.parameters():
        if p.grad is not None:
            total += p.grad.numel() * p.grad.element_size()
    for per_param in optimizer.state.values():
        for value in per_param.values():
            if torch.is_tensor(value):
                total += value.numel() * value.element_size()
    return total
