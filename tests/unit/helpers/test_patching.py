"""helpers.patching: a function replaced under every name it has, and put back as it was."""

import pytest
import torch
from torch import nn

from helpers.patching import replaced, returning


def test_replaced_restores_the_function_and_refuses_what_it_cannot_replace():
    def double(x, factor=2):
        return x * factor

    alias = double
    with replaced(double, lambda original, x, factor=2: original(x, factor) + 1) as original:
        assert alias(3) == 7 and original(3) == 6
    assert alias(3) == 6 and double(3, factor=3) == 9
    with replaced(torch.optim.Optimizer.load_state_dict, returning("seen")):    # a decorated method: its inner layer
        assert torch.optim.SGD(nn.Linear(1, 1).parameters(), lr=0.1).load_state_dict({}) == "seen"
    with pytest.raises(TypeError):
        with replaced(len, returning(0)):
            pass
