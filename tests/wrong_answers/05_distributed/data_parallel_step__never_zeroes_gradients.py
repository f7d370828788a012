# Mistake: never clears the old gradients, so from the second step on each backward() adds to the last step's.
def data_parallel_step(replicas, optimizers, shards, loss_fn):
    losses = []
    for model, (xs, ys) in zip(replicas, shards):
        loss = loss_fn(model(xs), ys)
        loss.backward()
        losses.append(loss.item())
    for same in zip(*(list(m.parameters()) for m in replicas)):
        mean = torch.stack([p.grad for p in same]).mean(dim=0)
        for p in same:
            p.grad.copy_(mean)
    for optimizer in optimizers:
        optimizer.step()
    return sum(losses) / len(losses)
