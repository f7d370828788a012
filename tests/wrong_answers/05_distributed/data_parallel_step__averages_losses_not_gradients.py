# Mistake: averages the losses and calls backward once; each replica still only gets (1/N of) its own shard's gradient.
def data_parallel_step(replicas, optimizers, shards, loss_fn):
    for optimizer in optimizers:
        optimizer.zero_grad()
    losses = [loss_fn(model(xs), ys) for model, (xs, ys) in zip(replicas, shards)]
    mean_loss = sum(losses) / len(losses)
    mean_loss.backward()
    for optimizer in optimizers:
        optimizer.step()
    return mean_loss.item()
