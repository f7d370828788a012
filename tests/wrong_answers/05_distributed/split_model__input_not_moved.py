# Mistake: moves the activations between the stages but assumes the input is already on devices[0].
def split_model(model, devices):
    cut = len(model) // 2

    class TwoStages(nn.Module):
        def __init__(self):
            super().__init__()
            self.stage0 = model[:cut].to(devices[0])
            self.stage1 = model[cut:].to(devices[1])

        def forward(self, x):
            return self.stage1(self.stage0(x).to(devices[1]))

    return TwoStages()
