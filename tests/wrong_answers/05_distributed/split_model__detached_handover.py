# Mistake: detaches the activations when moving them, so no gradient flows back into stage 0.
def split_model(model, devices):
    cut = len(model) // 2

    class TwoStages(nn.Module):
        def __init__(self):
            super().__init__()
            self.stage0 = model[:cut].to(devices[0])
            self.stage1 = model[cut:].to(devices[1])

        def forward(self, x):
            activations = self.stage0(x.to(devices[0]))
            return self.stage1(activations.detach().to(devices[1]))

    return TwoStages()
