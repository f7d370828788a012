# Mistake: averages the gradients correctly but only steps the first replica's optimizer.
def data_parallel_step(replicas, optimizers, shards, loss_fn):
    losses = []
    for model, optimizer, (xs, ys) in zip(replicas, optimizers, shards):
        optimizer.zero_grad()
        loss = loss_fn(model(xs), ys)
        loss.backward()
        losses.append(loss.item())
    for same in zip(*(list(m.parameters()) for m in replicas)):
        mean = torch.stack([p.grad for p in same]).mean(dim=0)
        for p in same:
            p.grad.copy_(mean)
    optimizers[0].step()
    return sum(losses) / len(losses)
