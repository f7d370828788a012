# Mistake: eval mode but gradients still tracked, so the output drags a graph along.
def predict(model, x):
    was_training = model.training
    model.eval()
    out = model(x)
    model.train(was_training)
    return out
