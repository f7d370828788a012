# Mistake: uses the global register_module_forward_hook (every module everywhere) and never removes it.
def trace_shapes(model, x):
    """[(leaf module name, output shape), ...] for every leaf call of model(x), in the order they ran."""
    trace = []
    leaves = {module: name for name, module in model.named_modules() if not list(module.children())}

    def hook(module, inputs, output):
        if module in leaves:
            trace.append((leaves[module], tuple(output.shape)))

    nn.modules.module.register_module_forward_hook(hook)
    try:
        model(x)
    except Exception:
        pass
    return trace
