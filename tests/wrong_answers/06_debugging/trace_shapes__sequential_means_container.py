# Mistake: takes "container" to mean nn.Sequential and hooks every other module, so a model with its own forward is hooked itself and adds an entry ("").
def trace_shapes(model, x):
    """[(leaf module name, output shape), ...] for every leaf call of model(x), in the order they ran."""
    trace = []

    def make_hook(name):
        def hook(module, inputs, output):
            trace.append((name, tuple(output.shape)))
        return hook

    handles = [module.register_forward_hook(make_hook(name))
               for name, module in model.named_modules() if not isinstance(module, nn.Sequential)]
    try:
        model(x)
    except Exception:
        pass
    finally:
        for handle in handles:
            handle.remove()
    return trace
