# Mistake: concatenates the powers along dim 0, giving a (N * degree, 1) column instead of (N, degree).
def polynomial_features(x, degree):
    """For x of shape (N, 1): the (N, degree) tensor of x**1, x**2, ..., x**degree (same dtype and device)."""
    return torch.cat([x ** k for k in range(1, degree + 1)])
