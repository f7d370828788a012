# Mistake: hooks every module from named_modules(), containers and the model itself included, so the trace has extra entries ("features", "") after their leaves.
def trace_shapes(model, x):
    """[(leaf module name, output shape), ...] for every leaf call of model(x), in the order they ran."""
    trace = []

    def make_hook(name):
        def hook(module, inputs, output):
            trace.append((name, tuple(output.shape)))
        return hook

    handles = [module.register_forward_hook(make_hook(name)) for name, module in model.named_modules()]
    try:
        model(x)
    except Exception:
        pass
    finally:
        for handle in handles:
            handle.remove()
    return trace
