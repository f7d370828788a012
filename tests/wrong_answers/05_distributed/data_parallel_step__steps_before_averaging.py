# Mistake: each optimizer steps right after its own backward(); the gradients are averaged only afterwards, too late.
def data_parallel_step(replicas, optimizers, shards, loss_fn):
    losses = []
    for model, optimizer, (xs, ys) in zip(replicas, optimizers, shards):
        optimizer.zero_grad()
        loss = loss_fn(model(xs), ys)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    for same in zip(*(list(m.parameters()) for m in replicas)):
        mean = torch.stack([p.grad for p in same]).mean(dim=0)
        for p in same:
            p.grad.copy_(mean)
    return sum(losses) / len(losses)
