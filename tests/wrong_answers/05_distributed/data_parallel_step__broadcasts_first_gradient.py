# Mistake: copies replica 0's gradient to every replica instead of averaging: in sync, but trained on one shard only.
def data_parallel_step(replicas, optimizers, shards, loss_fn):
    losses = []
    for model, optimizer, (xs, ys) in zip(replicas, optimizers, shards):
        optimizer.zero_grad()
        loss = loss_fn(model(xs), ys)
        loss.backward()
        losses.append(loss.item())
    for same in zip(*(list(m.parameters()) for m in replicas)):
        for p in same[1:]:
            p.grad.copy_(same[0].grad)
    for optimizer in optimizers:
        optimizer.step()
    return sum(losses) / len(losses)
