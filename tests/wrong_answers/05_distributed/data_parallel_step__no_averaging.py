# Mistake: every replica steps on its own shard's gradient; nothing is averaged, so the replicas drift apart.
def data_parallel_step(replicas, optimizers, shards, loss_fn):
    losses = []
    for model, optimizer, (xs, ys) in zip(replicas, optimizers, shards):
        optimizer.zero_grad()
        loss = loss_fn(model(xs), ys)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return sum(losses) / len(losses)
