# Mistake: catches only RuntimeError, so a model that fails with an IndexError or a ValueError (a dimension out of range, a batch-size mismatch in a loss) loses its trace.
def trace_shapes(model, x):
    """[(leaf module name, output shape), ...] for every leaf call of model(x), in the order they ran."""
    trace = []

    def make_hook(name):
        def hook(module, inputs, output):
            trace.append((name, tuple(output.shape)))
        return hook

    handles = [module.register_forward_hook(make_hook(name))
               for name, module in model.named_modules() if not list(module.children())]
    try:
        model(x)
    except RuntimeError:
        pass
    finally:
        for handle in handles:
            handle.remove()
    return trace
