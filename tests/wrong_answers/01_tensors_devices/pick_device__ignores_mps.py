# Mistake: the common one-liner, which never considers Apple's MPS.
import torch


def pick_device():
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
