# Mistake: keeps the stages in a plain Python list, so the module registers none of their parameters.
def split_model(model, devices):
    cut = len(model) // 2

    class TwoStages(nn.Module):
        def __init__(self):
            super().__init__()
            self.stages = [model[:cut].to(devices[0]), model[cut:].to(devices[1])]

        def forward(self, x):
            activations = self.stages[0](x.to(devices[0]))
            return self.stages[1](activations.to(devices[1]))

    return TwoStages()
