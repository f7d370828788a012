# Mistake: reports the layers in the order they are defined (named_modules order) instead of the order forward ran them.
def trace_shapes(model, x):
    """[(leaf module name, output shape), ...] for every leaf call of model(x), in the order they ran."""
    calls = []

    def make_hook(name):
        def hook(module, inputs, output):
            calls.append((name, tuple(output.shape)))
        return hook

    leaves = [name for name, module in model.named_modules() if not list(module.children())]
    handles = [module.register_forward_hook(make_hook(name))
               for name, module in model.named_modules() if not list(module.children())]
    try:
        model(x)
    except Exception:
        pass
    finally:
        for handle in handles:
            handle.remove()
    return [call for name in leaves for call in calls if call[0] == name]
