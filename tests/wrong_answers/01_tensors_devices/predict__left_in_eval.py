# Mistake: never restores the mode; a model being trained comes back in eval mode.
def predict(model, x):
    model.eval()
    with torch.no_grad():
        return model(x)
