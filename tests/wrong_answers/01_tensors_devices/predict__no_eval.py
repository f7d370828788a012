# Mistake: turns off gradients but never switches to eval mode (dropout stays active).
def predict(model, x):
    with torch.no_grad():
        return model(x)
