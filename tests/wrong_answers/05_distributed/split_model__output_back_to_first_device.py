# Mistake: brings the output back to devices[0] "to be safe", an extra copy on every forward pass.
def split_model(model, devices):
    cut = len(model) // 2

    class TwoStages(nn.Module):
        def __init__(self):
            super().__init__()
            self.stage0 = model[:cut].to(devices[0])
            self.stage1 = model[cut:].to(devices[1])

        def forward(self, x):
            activations = self.stage0(x.to(devices[0]))
            return self.stage1(activations.to(devices[1])).to(devices[0])

    return TwoStages()
