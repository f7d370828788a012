# Mistake: saves the bound method model.state_dict (no parentheses), which pickles the whole model.
def save_weights(model, path):
    torch.save(model.state_dict, path)
