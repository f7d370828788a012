# Mistake: pickles the whole model object instead of its state_dict.
def save_weights(model, path):
    torch.save(model, path)
