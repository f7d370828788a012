"""A tiny, fully seeded training run, for checking that a resumed run matches one that never stopped.

Everything that makes a resume hard is in it: dropout and a shuffling DataLoader (both draw from
PyTorch's global random generator), an optimizer with state of its own (momentum), and a
learning-rate scheduler. It trains in milliseconds on a CPU.

    run = tiny_run(seed=0)                 # reseeds the global generator, then builds everything
    for epoch in range(5):
        train_one_epoch(run)               # one pass over the data, then scheduler.step()

    run = trained_run(seed=0, epochs=3)    # the same, in one call
    train_until(run, start=3, stop=5)      # epochs 3 and 4 of a run (a resumed one, say)
"""

from dataclasses import dataclass

import torch
from torch import nn
from torch.utils.data import DataLoader

from helpers.data import make_classification


@dataclass
class TinyRun:
    """The objects of one training run, named as in the course's notebooks."""

    model: nn.Module
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    loader: DataLoader
    loss_fn: nn.Module


def tiny_run(seed: int = 0, optimizer: str = "sgd") -> TinyRun:
    """A fresh run, as a training script builds it at start-up: seeds the global generator first.

    `optimizer` is "sgd" (SGD with momentum 0.9, lr 0.1) or "adam" (lr 0.01); the scheduler
    halves the learning rate every 2 epochs. The loader has no generator of its own, so its
    shuffling, like dropout, draws from the global generator.
    """
    torch.manual_seed(seed)
    loader = DataLoader(make_classification(64, num_features=4, num_classes=3, seed=seed + 1),
                        batch_size=8, shuffle=True)
    model = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 3))
    if optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    elif optimizer == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
    else:
        raise ValueError(f"optimizer should be 'sgd' or 'adam', got {optimizer!r}")
    scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    return TinyRun(model, opt, scheduler, loader, nn.CrossEntropyLoss())


def train_one_epoch(run: TinyRun) -> float:
    """One epoch in training mode, then one scheduler step; returns the mean loss per example."""
    run.model.train()
    total, count = 0.0, 0
    for x, y in run.loader:
        run.optimizer.zero_grad()
        loss = run.loss_fn(run.model(x), y)
        loss.backward()
        run.optimizer.step()
        total += loss.item() * len(x)
        count += len(x)
    run.scheduler.step()
    return total / count


def trained_run(seed: int = 0, epochs: int = 1, optimizer: str = "sgd") -> TinyRun:
    """`tiny_run(seed, optimizer)` trained for `epochs` epochs (epochs 0 .. epochs - 1)."""
    run = tiny_run(seed, optimizer)
    return train_until(run, 0, epochs)


def train_until(run: TinyRun, start: int, stop: int) -> TinyRun:
    """Train `run` for epochs `start` .. `stop - 1` (as `for epoch in range(start, stop)`); returns `run`."""
    for _ in range(start, stop):
        train_one_epoch(run)
    return run


def largest_difference(state_a: dict, state_b: dict) -> float:
    """The largest absolute difference between two state_dicts with the same keys (0.0: identical)."""
    if state_a.keys() != state_b.keys():
        raise ValueError(f"different keys: {sorted(state_a.keys() ^ state_b.keys())}")
    return max(((a.double() - b.double()).abs().max().item() if a.numel() else 0.0)
               for a, b in zip(state_a.values(), (state_b[k] for k in state_a)))
