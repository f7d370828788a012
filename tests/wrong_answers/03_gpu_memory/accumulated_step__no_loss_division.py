# Mistake: micro-batch losses are not divided by the number of micro-batches: gradients k times too large.
def accumulated_step(model, micro_batches, loss_fn, optimizer):
    optimizer.zero_grad()
    total = 0.0
    for x, y in micro_batches:
        loss = loss_fn(model(x), y)
        loss.backward()
        total += loss.item() / len(micro_batches)
    optimizer.step()
    return total
