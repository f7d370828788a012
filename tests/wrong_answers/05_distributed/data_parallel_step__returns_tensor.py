# Mistake: returns the mean loss as a tensor (still attached to the graph), not as a Python float.
def data_parallel_step(replicas, optimizers, shards, loss_fn):
    losses = []
    for model, optimizer, (xs, ys) in zip(replicas, optimizers, shards):
        optimizer.zero_grad()
        loss = loss_fn(model(xs), ys)
        loss.backward()
        losses.append(loss)
    for same_param in zip(*(list(model.parameters()) for model in replicas)):
        mean = torch.stack([p.grad for p in same_param]).mean(dim=0)
        for p in same_param:
            p.grad.copy_(mean)
    for optimizer in optimizers:
        optimizer.step()
    return torch.stack(losses).mean()
