# Mistake: adds the replicas' gradients up instead of averaging them (a step world_size times too big).
def data_parallel_step(replicas, optimizers, shards, loss_fn):
    losses = []
    for model, optimizer, (xs, ys) in zip(replicas, optimizers, shards):
        optimizer.zero_grad()
        loss = loss_fn(model(xs), ys)
        loss.backward()
        losses.append(loss.item())
    for same in zip(*(list(m.parameters()) for m in replicas)):
        total = torch.stack([p.grad for p in same]).sum(dim=0)
        for p in same:
            p.grad.copy_(total)
    for optimizer in optimizers:
        optimizer.step()
    return sum(losses) / len(losses)
