# Mistake: hooks only the model's direct children, so a nested block shows up as one entry ("features") instead of its layers ("features.0", ...).
def trace_shapes(model, x):
    """[(leaf module name, output shape), ...] for every leaf call of model(x), in the order they ran."""
    trace = []

    def make_hook(name):
        def hook(module, inputs, output):
            trace.append((name, tuple(output.shape)))
        return hook

    handles = [module.register_forward_hook(make_hook(name)) for name, module in model.named_children()]
    try:
        model(x)
    except Exception:
        pass
    finally:
        for handle in handles:
            handle.remove()
    return trace
