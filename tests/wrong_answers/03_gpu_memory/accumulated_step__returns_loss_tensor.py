# Mistake: the losses are summed as tensors, so the result is a tensor that keeps every micro-batch's graph.
def accumulated_step(model, micro_batches, loss_fn, optimizer):
    optimizer.zero_grad()
    total = 0.0
    for x, y in micro_batches:
        loss = loss_fn(model(x), y) / len(micro_batches)
        loss.backward()
        total = total + loss
    optimizer.step()
    return total
