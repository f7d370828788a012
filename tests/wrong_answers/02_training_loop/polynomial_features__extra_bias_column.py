# Mistake: adds a column of ones (x**0) in front, giving degree + 1 columns.
def polynomial_features(x, degree):
    """For x of shape (N, 1): the (N, degree) tensor of x**1, x**2, ..., x**degree (same dtype and device)."""
    return torch.cat([x ** k for k in range(degree + 1)], dim=1)
