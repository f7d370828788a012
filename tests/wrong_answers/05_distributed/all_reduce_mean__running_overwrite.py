# Mistake: recomputes the mean after each replica is overwritten, so later replicas average already-averaged values.
def all_reduce_mean(grads_per_replica):
    for i in range(len(grads_per_replica[0])):
        for grads in grads_per_replica:
            grads[i].copy_(torch.stack([g[i] for g in grads_per_replica]).mean(dim=0))
    return grads_per_replica
