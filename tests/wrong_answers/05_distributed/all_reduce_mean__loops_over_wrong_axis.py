# Mistake: mixes up the two axes: loops over the replicas where it should loop over the parameters.
def all_reduce_mean(grads_per_replica):
    for i in range(len(grads_per_replica)):
        mean = torch.stack([grads[i] for grads in grads_per_replica]).mean(dim=0)
        for grads in grads_per_replica:
            grads[i].copy_(mean)
    return grads_per_replica
