"""Torch's global state, carried both ways with every request and answer: gradient mode, the random
state, the default dtype, autocast (per device) and the default device."""


from __future__ import annotations

import torch

from course.grading.kernel.protocol import AUTOCAST_DEVICES, DTYPES
from course.grading.verdicts.wire_decode import WireError

# -- torch's global state -------------------------------------------------------------------------------



def global_state() -> list:
    """[grad mode, random state, default dtype, [[device, autocast on, autocast dtype], ...], default device]."""
    autocast = [[d, bool(torch.is_autocast_enabled(d)), str(torch.get_autocast_dtype(d)).removeprefix("torch.")]
                for d in AUTOCAST_DEVICES]
    return [bool(torch.is_grad_enabled()), torch.get_rng_state(), str(torch.get_default_dtype()).removeprefix("torch."),
            autocast, str(torch.get_default_device())]


def set_global_state(state) -> None:
    """Take over torch's global state as the kernel reports it, each part only where it is of the right form."""
    if type(state) is not list or len(state) != 5:
        raise WireError("torch's global state in the wrong form")
    grad, rng, dtype, autocast, device = state
    if type(grad) is bool:
        torch.set_grad_enabled(grad)
    if type(rng) is torch.Tensor and rng.dtype == torch.uint8 and rng.dim() == 1:     # None: unchanged
        try:
            torch.set_rng_state(rng)
        except RuntimeError:
            pass
    if type(dtype) is str and dtype in DTYPES:
        torch.set_default_dtype(getattr(torch, dtype))
    for entry in autocast if type(autocast) is list else []:
        if type(entry) is list and len(entry) == 3 and entry[0] in AUTOCAST_DEVICES and type(entry[1]) is bool \
                and type(entry[2]) is str and entry[2] in DTYPES:
            torch.set_autocast_enabled(entry[0], entry[1])
            try:
                torch.set_autocast_dtype(entry[0], getattr(torch, entry[2]))
            except RuntimeError:        # a dtype autocast refuses on that device
                pass
    if type(device) is str and len(device) < 40:
        try:
            place = torch.device(device)
        except (RuntimeError, ValueError):
            return
        if place.type == "cpu" or available(place):
            torch.set_default_device(None if place.type == "cpu" else place)



def available(device: torch.device) -> bool:
    """Does this host have `device`'s kind of accelerator (torch.cuda.is_available() for cuda)?"""
    module = getattr(torch, device.type, None)
    is_available = getattr(module, "is_available", None) if module is not None else None
    return bool(callable(is_available) and is_available())


