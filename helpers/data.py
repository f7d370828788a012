"""Small synthetic data sets. Everything is generated; nothing is downloaded."""

import torch
from torch.utils.data import TensorDataset


def make_regression(n: int, num_features: int = 3, noise: float = 0.1, seed: int = 0) -> TensorDataset:
    """`n` pairs `(x, y)`: `x` of shape `(num_features,)`, `y = x @ w + b + noise` of shape `(1,)`.

    The true weights are drawn from the same seed, so the same arguments give the same data.
    """
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, num_features, generator=g)
    w = torch.randn(num_features, 1, generator=g)
    b = torch.randn(1, generator=g)
    y = x @ w + b + noise * torch.randn(n, 1, generator=g)
    return TensorDataset(x, y)


def make_classification(n: int, num_features: int = 2, num_classes: int = 3, spread: float = 1.0,
                        seed: int = 0) -> TensorDataset:
    """`n` pairs `(x, label)`: Gaussian blobs around `num_classes` centres.

    `x` is float32 of shape `(num_features,)`; `label` is an int64 scalar, as
    `nn.CrossEntropyLoss` expects class labels to be.
    """
    g = torch.Generator().manual_seed(seed)
    centres = 3.0 * torch.randn(num_classes, num_features, generator=g)
    labels = torch.randint(0, num_classes, (n,), generator=g)
    x = centres[labels] + spread * torch.randn(n, num_features, generator=g)
    return TensorDataset(x, labels)

