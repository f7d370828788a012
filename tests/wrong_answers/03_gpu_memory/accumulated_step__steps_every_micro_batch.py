# Mistake: the optimizer steps after every micro-batch: k small steps, not one big-batch step.
def accumulated_step(model, micro_batches, loss_fn, optimizer):
    total = 0.0
    for x, y in micro_batches:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() / len(micro_batches)
    return total
