# Mistake: only state tensors shaped like their parameter are counted; Adam's step counters are skipped.
def measured_state_bytes(model, optimizer):
    total = 0
    for p in model.parameters():
        total += p.numel() * p.element_size()
        if p.grad is not None:
            total += p.grad.numel() * p.grad.element_size()
        for value in optimizer.state.get(p, {}).values():
            if torch.is_tensor(value) and value.shape == p.shape:
                total += value.numel() * value.element_size()
    return total
