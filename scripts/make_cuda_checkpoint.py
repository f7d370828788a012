"""Write notebook 04's GPU-tagged checkpoint (a maintainer's tool: not part of the package students install).

    python scripts/make_cuda_checkpoint.py            # the three shipped copies
    python scripts/make_cuda_checkpoint.py PATH       # one file at PATH

The checkpoint is in the format notebook 04's `save_checkpoint` exercise asks for, so the code that builds
it is that exercise's answer: it lives here, outside `helpers`, which students install (no shipped helper
holds an exercise's solution). The copies it writes: `source/04_serialization/data/` (the instructor's),
`release/04_serialization/data/` (`course build` copies it there) and `helpers/checkpoint_files/` (package
data, for a notebook opened without its data folder, as on Colab). See source/04_serialization/data/README.md.
"""

import sys
from pathlib import Path

import torch
from torch import nn
from torch.utils.data import DataLoader

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from helpers.checkpoints import (  # noqa: E402 - after the checkout is importable
    CUDA_CHECKPOINT_EPOCHS, CUDA_CHECKPOINT_NAME, cuda_checkpoint_model, save_as_if_on_cuda, storage_locations)
from helpers.data import make_classification  # noqa: E402

COPIES = [ROOT / "source" / "04_serialization" / "data" / CUDA_CHECKPOINT_NAME,
          ROOT / "release" / "04_serialization" / "data" / CUDA_CHECKPOINT_NAME,
          ROOT / "helpers" / "checkpoint_files" / CUDA_CHECKPOINT_NAME]


def write_cuda_checkpoint(path) -> dict:
    """Write the course's GPU-tagged checkpoint to `path` and return what was saved.

    A 2 -> 32 -> 3 classifier trained for `CUDA_CHECKPOINT_EPOCHS` epochs with Adam (lr 0.01) and a
    StepLR scheduler on `helpers.data.make_classification(256, seed=0)`, all seeded; saved as the
    notebook's resume checkpoint: epoch (the last finished, counted from 0), model, optimizer,
    scheduler, rng, cuda_rng. Model weights and Adam's moment estimates are tagged 'cuda:0';
    Adam's step counters and the generator state keep 'cpu', as on a real GPU run.
    """
    torch.manual_seed(0)
    loader = DataLoader(make_classification(256, num_features=2, num_classes=3, seed=0),
                        batch_size=32, shuffle=True)
    model = cuda_checkpoint_model()
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    for epoch in range(CUDA_CHECKPOINT_EPOCHS):
        for x, y in loader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
        scheduler.step()
    checkpoint = {
        "epoch": epoch,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "rng": torch.get_rng_state(),
        "cuda_rng": [],  # what torch.cuda.get_rng_state_all() gives where CUDA is absent
    }
    on_cpu = [state["step"] for state in optimizer.state.values()] + [checkpoint["rng"]]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    save_as_if_on_cuda(checkpoint, path, keep_on_cpu=on_cpu)
    return checkpoint


if __name__ == "__main__":
    for target in [Path(sys.argv[1])] if len(sys.argv) > 1 else COPIES:
        write_cuda_checkpoint(target)
        print(f"wrote {target} ({target.stat().st_size} bytes): {storage_locations(target)}")
