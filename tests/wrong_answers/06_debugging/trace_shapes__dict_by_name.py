# Mistake: collects shapes in a dict keyed by module name, so a layer called twice appears once, with only its last shape.
def trace_shapes(model, x):
    """[(leaf module name, output shape), ...] for every leaf call of model(x), in the order they ran."""
    shapes = {}

    def make_hook(name):
        def hook(module, inputs, output):
            shapes[name] = tuple(output.shape)
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
    return list(shapes.items())
