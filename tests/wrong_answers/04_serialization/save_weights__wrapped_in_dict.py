# Mistake: wraps the state_dict in a checkpoint-style dictionary, so the file is not a state_dict.
def save_weights(model, path):
    torch.save({"model_state": model.state_dict()}, path)
