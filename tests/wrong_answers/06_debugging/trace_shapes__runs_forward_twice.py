# Mistake: runs model(x) once without hooks to see whether it fails, then again with hooks, so every forward pass (and its side effects: batch norm statistics, dropout draws) happens twice.
def trace_shapes(model, x):
    """[(leaf module name, output shape), ...] for every leaf call of model(x), in the order they ran."""
    try:
        model(x)
        fails = False
    except Exception:
        fails = True
    trace = []

    def make_hook(name):
        def hook(module, inputs, output):
            trace.append((name, tuple(output.shape)))
        return hook

    handles = [module.register_forward_hook(make_hook(name))
               for name, module in model.named_modules() if not list(module.children())]
    try:
        model(x)
    except Exception:
        assert fails
    finally:
        for handle in handles:
            handle.remove()
    return trace
