# Mistake: divides the sum by the number of gradients per replica instead of the number of replicas.
def all_reduce_mean(grads_per_replica):
    count = len(grads_per_replica[0])
    for i in range(count):
        total = torch.stack([grads[i] for grads in grads_per_replica]).sum(dim=0)
        for grads in grads_per_replica:
            grads[i].copy_(total / count)
    return grads_per_replica
