# Mistake: every entry of optimizer.state[p] taken to be a full copy of p (the step counter is one number).
def measured_state_bytes(model, optimizer):
    total = 0
    for p in model.parameters():
        size = p.numel() * p.element_size()
        total += size
        if p.grad is not None:
            total += size
        total += len(optimizer.state.get(p, {})) * size
    return total
