# Mistake: cuts the model in two but forgets to move the stages to their devices; only the data is moved.
def split_model(model, devices):
    cut = len(model) // 2

    class TwoStages(nn.Module):
        def __init__(self):
            super().__init__()
            self.stage0 = model[:cut]
            self.stage1 = model[cut:]

        def forward(self, x):
            activations = self.stage0(x.to(devices[0]))
            return self.stage1(activations.to(devices[1]))

    return TwoStages()
