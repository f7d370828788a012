"""Small data sets: synthetic ones generated from a seed, and real digits shipped inside scikit-learn. Nothing is downloaded."""

import importlib.util
from pathlib import Path

import numpy as np
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



def load_digits(split: str = "all", val_fraction: float = 0.2, seed: int = 0) -> TensorDataset:
    """scikit-learn's handwritten digits (1,797 real 8x8 images, shipped inside the package: no download).

    Items are `(image, label)`: `image` is float32 of shape `(1, 8, 8)` with pixels scaled
    from 0..16 to 0..1, `label` an int64 scalar in 0..9. `split` is `"train"`, `"val"` or
    `"all"`; the train/val split is a fixed shuffle drawn from `seed`, so it is the same on
    every machine and the two parts never share an image.
    """
    table = np.loadtxt(_digits_file(), delimiter=",")  # 1,797 rows: 64 pixels, then the label
    images = torch.tensor(table[:, :64], dtype=torch.float32).reshape(-1, 1, 8, 8) / 16.0
    labels = torch.tensor(table[:, 64], dtype=torch.int64)
    if split == "all":
        return TensorDataset(images, labels)
    order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(seed))
    n_val = round(val_fraction * len(labels))
    parts = {"val": order[:n_val], "train": order[n_val:]}
    if split not in parts:
        raise ValueError(f"split must be 'train', 'val' or 'all', not {split!r}")
    return TensorDataset(images[parts[split]], labels[parts[split]])


def _digits_file() -> Path:
    """scikit-learn's own copy of the digits, found without importing scikit-learn (seconds of a notebook's start)."""
    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("the digits ship inside scikit-learn: pip install scikit-learn")
    return Path(spec.submodule_search_locations[0]) / "datasets" / "data" / "digits.csv.gz"
