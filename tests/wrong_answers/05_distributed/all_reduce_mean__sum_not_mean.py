# Mistake: all-reduce with a sum and no division: every replica gets the sum of the gradients.
def all_reduce_mean(grads_per_replica):
    for i in range(len(grads_per_replica[0])):
        total = torch.stack([grads[i] for grads in grads_per_replica]).sum(dim=0)
        for grads in grads_per_replica:
            grads[i].copy_(total)
    return grads_per_replica
