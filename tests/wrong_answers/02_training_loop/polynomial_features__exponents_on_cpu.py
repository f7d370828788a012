# Mistake: builds the exponents on the CPU, so a GPU tensor x fails with a device mismatch.
def polynomial_features(x, degree):
    """For x of shape (N, 1): the (N, degree) tensor of x**1, x**2, ..., x**degree (same dtype and device)."""
    return x ** torch.arange(1, degree + 1)
