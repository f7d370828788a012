# Mistake: each loss divided by the micro-batch size instead of the number of micro-batches (the loss is already a mean).
def accumulated_step(model, micro_batches, loss_fn, optimizer):
    optimizer.zero_grad()
    total = 0.0
    for x, y in micro_batches:
        loss = loss_fn(model(x), y) / len(x)
        loss.backward()
        total += loss.item()
    optimizer.step()
    return total
