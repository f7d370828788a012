# Mistake: old gradients are never cleared before accumulating, so the previous step's gradients leak in.
def accumulated_step(model, micro_batches, loss_fn, optimizer):
    total = 0.0
    for x, y in micro_batches:
        loss = loss_fn(model(x), y) / len(micro_batches)
        loss.backward()
        total += loss.item()
    optimizer.step()
    return total
