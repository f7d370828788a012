# Mistake: saves named_parameters() only, so buffers such as batch norm's running statistics are lost.
def save_weights(model, path):
    torch.save(dict(model.named_parameters()), path)
