# Mistake: builds the whole autograd graph and detaches the output afterwards (the memory is still spent).
def predict(model, x):
    was_training = model.training
    model.eval()
    out = model(x).detach()
    model.train(was_training)
    return out
