# Mistake: zero_grad inside the loop wipes the earlier micro-batches: only the last one's gradient is used.
def accumulated_step(model, micro_batches, loss_fn, optimizer):
    total = 0.0
    for x, y in micro_batches:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y) / len(micro_batches)
        loss.backward()
        total += loss.item()
    optimizer.step()
    return total
