# Mistake: gradients cleared after the step instead of before accumulating, so gradients already on the model leak in.
def accumulated_step(model, micro_batches, loss_fn, optimizer):
    total = 0.0
    for x, y in micro_batches:
        loss = loss_fn(model(x), y) / len(micro_batches)
        loss.backward()
        total += loss.item()
    optimizer.step()
    optimizer.zero_grad()
    return total
