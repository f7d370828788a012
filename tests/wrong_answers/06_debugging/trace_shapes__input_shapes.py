# Mistake: records the shape of each layer's input (inputs[0]) instead of its output.
def trace_shapes(model, x):
    """[(leaf module name, output shape), ...] for every leaf call of model(x), in the order they ran."""
    trace = []

    def make_hook(name):
        def hook(module, inputs, output):
            trace.append((name, tuple(inputs[0].shape)))
        return hook

    handles = [module.register_forward_hook(make_hook(name))
               for name, module in model.named_modules() if not list(module.children())]
    try:
        model(x)
    except Exception:
        pass
    finally:
        for handle in handles:
            handle.remove()
    return trace
