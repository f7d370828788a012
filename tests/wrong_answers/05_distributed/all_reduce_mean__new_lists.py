# Mistake: builds new lists of mean tensors and leaves the replicas' own gradient tensors untouched.
def all_reduce_mean(grads_per_replica):
    means = [torch.stack(same).mean(dim=0) for same in zip(*grads_per_replica)]
    return [[m.clone() for m in means] for _ in grads_per_replica]
