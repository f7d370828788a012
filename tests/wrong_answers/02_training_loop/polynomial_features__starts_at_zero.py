# Mistake: powers 0 .. degree-1 (a column of ones first) instead of 1 .. degree.
def polynomial_features(x, degree):
    """For x of shape (N, 1): the (N, degree) tensor of x**1, x**2, ..., x**degree (same dtype and device)."""
    return x ** torch.arange(degree, device=x.device)
