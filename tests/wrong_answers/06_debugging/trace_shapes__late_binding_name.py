# Mistake: registers a lambda that reads the loop variable `name`; Python looks it up when the hook runs, so every entry gets the last leaf's name.
def trace_shapes(model, x):
    """[(leaf module name, output shape), ...] for every leaf call of model(x), in the order they ran."""
    trace, handles = [], []
    for name, module in model.named_modules():
        if not list(module.children()):
            handles.append(module.register_forward_hook(lambda m, i, o: trace.append((name, tuple(o.shape)))))
    try:
        model(x)
    except Exception:
        pass
    finally:
        for handle in handles:
            handle.remove()
    return trace
