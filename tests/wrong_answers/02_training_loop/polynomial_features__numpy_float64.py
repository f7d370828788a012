# Mistake: goes through NumPy's default float64, so a float32 x comes back as float64.
def polynomial_features(x, degree):
    """For x of shape (N, 1): the (N, degree) tensor of x**1, x**2, ..., x**degree (same dtype and device)."""
    import numpy as np

    return torch.from_numpy(x.detach().cpu().numpy().astype(np.float64) ** np.arange(1, degree + 1))
