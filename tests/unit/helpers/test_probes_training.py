"""Unit tests of helpers.probes_training (what notebook 02's tests use to watch a loop) and of
helpers.checks.check_loss_plot."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

from helpers.checks import check_loss_plot  # noqa: E402
from helpers.probes_training import Call, LoopProbe, SavedActivations, probe_loader, slope_problem  # noqa: E402


def _data(n=10):
    gen = torch.Generator().manual_seed(0)
    return torch.randn(n, 3, generator=gen), torch.randn(n, 1, generator=gen)


def test_probe_loader_yields_batches_in_order_with_the_last_one_shorter():
    x, y = _data()
    loader = probe_loader(x, y, 4)
    batches = list(loader)
    assert len(loader) == 3 and [len(xb) for xb, _ in batches] == [4, 4, 2]
    assert torch.equal(torch.cat([xb.as_subclass(torch.Tensor) for xb, _ in batches]), x)
    assert len(loader.dataset) == 10 and loader.batch_size == 4


def test_unmoved_names_exactly_the_tensors_whose_to_was_never_called():
    x, y = _data()
    loader = probe_loader(x, y, 4)
    for i, (xb, yb) in enumerate(loader):
        xb.to("cpu")
        if i != 1:
            yb.to(torch.device("cpu"), non_blocking=True)
    assert loader.unmoved() == ["y of batch 1 (pass 0)"]


@pytest.mark.parametrize("before", [lambda t: t.detach(), lambda t: t.clone(), lambda t: t.float(),
                                    lambda t: t.detach().clone().contiguous()],
                         ids=["detach", "clone", "float", "chain"])
def test_a_batch_computed_from_a_yielded_one_and_then_moved_counts_as_moved(before):
    x, y = _data()
    loader, probe = probe_loader(x, y, 4), LoopProbe(nn.Linear(3, 1))
    for i, (xb, yb) in enumerate(loader):
        xb, yb = before(xb), before(yb)
        probe.loss(nn.MSELoss())(probe(xb.to("cpu")), yb.to("cpu") if i != 1 else yb)
    assert loader.unmoved() == ["y of batch 1 (pass 0)"] and probe.unmoved() == ["y of loss call 1"]


def test_to_returns_a_plain_tensor_with_the_same_values():
    x, y = _data()
    xb, _ = next(iter(probe_loader(x, y, 4)))
    moved = xb.to("cpu")
    assert type(moved) is torch.Tensor and torch.equal(moved, x[:4])


def test_loop_probe_records_moves_modes_and_grad_and_passes_the_inner_outputs_through():
    x, y = _data()
    torch.manual_seed(0)
    probe = LoopProbe(nn.Linear(3, 1))
    loss_fn = probe.loss(nn.MSELoss())
    (x0, y0), (x1, y1), _ = list(probe_loader(x, y, 4))
    out = probe(x0.to("cpu"))
    assert torch.equal(out, probe.inner(x[:4]))
    loss_fn(out, y0)                                 # targets not moved
    probe.eval()
    with torch.no_grad():
        loss_fn(probe(x1), y1.to("cpu"))             # inputs not moved
    assert probe.calls == [Call(True, True, True), Call(False, False, False)]
    assert probe.unmoved() == ["x of forward pass 1", "y of loss call 0"]


@pytest.mark.slow
def test_loop_probe_ignores_nothing_of_a_correct_epoch():
    x, y = _data()
    probe, loader = LoopProbe(nn.Linear(3, 1)), probe_loader(x, y, 4)
    loss_fn, optimizer = probe.loss(nn.MSELoss()), torch.optim.SGD(probe.parameters(), lr=0.1)
    before = probe.inner.weight.detach().clone()
    for xb, yb in loader:
        xb, yb = xb.to("cpu"), yb.to("cpu")
        optimizer.zero_grad()
        loss_fn(probe(xb), yb).backward()
        optimizer.step()
    assert loader.unmoved() == [] and probe.unmoved() == []
    assert not torch.equal(probe.inner.weight, before)


def test_slope_problem_is_reproducible_and_configurable():
    model, train, val, optimizer, scheduler = slope_problem(val_slope=0.4, lr=0.05, weight=0.5)
    assert model.inner.weight.item() == 0.5 and model.inner.bias is None
    assert [len(xb) for xb, _ in train] == [2, 2, 1] and [len(xb) for xb, _ in val] == [2, 1]
    x_val, y_val = val.dataset.tensors
    assert torch.allclose(y_val, 0.4 * x_val) and bool((x_val < 0).all())
    assert optimizer.param_groups[0]["lr"] == 0.05
    for _ in range(2):
        optimizer.step()
        scheduler.step()
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.025)


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10))


def test_saved_activations_peak_is_one_batch_when_each_graph_is_dropped():
    model = _mlp()
    with SavedActivations() as one:
        model(torch.randn(32, 64)).sum()
    with SavedActivations() as five:
        for _ in range(5):
            (model(torch.randn(32, 64)).argmax(dim=1) == 0).sum().item()
    assert one.peak > 0 and five.peak == one.total
    assert five.total == 5 * one.total and five.live == 0


def test_saved_activations_peak_grows_when_graphs_are_kept():
    model, kept = _mlp(), []
    with SavedActivations() as saved:
        for _ in range(3):
            kept.append(model(torch.randn(32, 64)))
    assert saved.peak == saved.total == saved.live > 0


def test_saved_activations_counts_nothing_under_no_grad_and_backward_still_works():
    model = _mlp()
    with SavedActivations() as saved, torch.no_grad():
        model(torch.randn(32, 64))
    assert saved.total == 0
    x = torch.randn(4, 64, requires_grad=True)
    with SavedActivations():
        loss = model(x).pow(2).sum()
    loss.backward()
    x2 = x.detach().clone().requires_grad_()
    model(x2).pow(2).sum().backward()
    assert torch.allclose(x.grad, x2.grad)


HISTORY = {"train_loss": [1.0, 0.7, 0.5, 0.4], "val_loss": [1.1, 0.8, 0.6, 0.7], "best_epoch": 2}


def _plot(mark=True, labels=("train loss", "val loss"), xlabel="epoch", legend=True):
    fig, ax = plt.subplots()
    ax.plot(HISTORY["train_loss"], label=labels[0])
    ax.plot(HISTORY["val_loss"], label=labels[1])
    if mark is True:
        ax.axvline(2)
    elif mark == "point":
        ax.scatter([2], [0.6])
    elif mark is not None:
        ax.axvline(mark)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("loss")
    if legend:
        ax.legend()
    return fig


@pytest.mark.parametrize("mark", [True, "point"])
def test_check_loss_plot_accepts_a_line_or_a_point_at_the_best_epoch(mark):
    check_loss_plot(_plot(mark=mark), HISTORY, "plot")
    plt.close("all")


@pytest.mark.parametrize("kwargs, words", [
    ({"mark": None}, "a mark at the best epoch 2"),
    ({"mark": 3}, "a mark at the best epoch 2"),
    ({"labels": ("a", "b")}, "named in a legend with a text containing 'train'"),
    ({"xlabel": "step"}, "mentions 'epoch'"),
    ({"legend": False}, "named in a legend"),
])
def test_check_loss_plot_names_what_is_missing(kwargs, words):
    with pytest.raises(AssertionError, match=words):
        check_loss_plot(_plot(**kwargs), HISTORY, "plot")
    plt.close("all")


def test_check_loss_plot_wants_a_figure():
    with pytest.raises(AssertionError, match="return the Figure"):
        check_loss_plot(None, HISTORY, "plot")


def _curves(ax, order=("train", "val")):
    for which in order:
        ax.plot(HISTORY[f"{which}_loss"], label=f"{which} loss")
    ax.set_xlabel("epoch")
    ax.set_ylabel("loss")


@pytest.mark.parametrize("mark", [
    lambda ax: ax.plot(2, 0.6, "r*"),
    lambda ax: ax.vlines(2, 0, 1),
    lambda ax: ax.axvspan(1.5, 2.5, alpha=0.2),
    lambda ax: ax.annotate("best", xy=(2, 0.6), xytext=(3, 0.9), arrowprops={}),
    lambda ax: ax.text(2, 0.65, "best"),
    lambda ax: ax.errorbar([2], [0.6], yerr=[0.05], fmt="o"),
    lambda ax: ax.stem([2], [0.6]),
], ids=["plot-point", "vlines", "axvspan", "annotate", "text", "errorbar", "stem"])
def test_check_loss_plot_accepts_every_way_to_mark_the_best_epoch(mark):
    fig, ax = plt.subplots()
    _curves(ax)
    mark(ax)
    ax.legend()
    check_loss_plot(fig, HISTORY, "plot")
    plt.close("all")


def test_check_loss_plot_finds_curves_by_their_data_in_any_order():
    fig, ax = plt.subplots()
    ax.axvline(2, label="best val epoch")          # drawn first, and its label says "val"
    _curves(ax, order=("val", "train"))
    ax.legend()
    check_loss_plot(fig, HISTORY, "plot")
    fig, ax = plt.subplots()
    ax.plot(HISTORY["train_loss"])
    ax.plot(HISTORY["val_loss"], marker="o", markevery=[2])
    ax.set_xlabel("epoch")
    ax.set_ylabel("loss")
    ax.legend(["train", "validation"])            # labels given to the legend, not to the lines
    check_loss_plot(fig, HISTORY, "plot")
    plt.close("all")


@pytest.mark.parametrize("mark", [lambda ax: ax.axvspan(0, 3, alpha=0.1), lambda ax: ax.scatter([2], [0.3]),
                                  lambda ax: ax.text(3, 0.6, "best")],
                         ids=["wide-span", "wrong-point", "text-elsewhere"])
def test_check_loss_plot_refuses_a_mark_that_is_not_at_the_best_epoch(mark):
    fig, ax = plt.subplots()
    _curves(ax)
    mark(ax)
    ax.legend()
    with pytest.raises(AssertionError, match="a mark at the best epoch 2"):
        check_loss_plot(fig, HISTORY, "plot")
    plt.close("all")


def test_a_deep_copy_of_a_loop_probe_records_into_the_original():
    import copy

    probe = LoopProbe(nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)))
    twin = copy.deepcopy(probe).eval()
    with torch.no_grad():
        twin(torch.randn(4, 3))
    twin.loss(nn.MSELoss())(torch.zeros(2), torch.zeros(2))
    assert probe.calls == [Call(True, False, False)] and probe.targets_moved == [True]
    assert probe.training and twin.inner[1].running_mean is not probe.inner[1].running_mean


def _epoch(zero_grad="before", keep=lambda loss: loss.item()):
    """One epoch of a loop over a LoopProbe and a RecordingSGD(lr=0); returns the probe, optimizer and gradients
    each batch alone has."""
    from helpers.probes_training import RecordingSGD, batch_gradients

    x, y = _data()
    torch.manual_seed(0)
    probe = LoopProbe(nn.Linear(3, 1))
    want = batch_gradients(probe.inner, nn.MSELoss(), [(x[:4], y[:4]), (x[4:8], y[4:8]), (x[8:], y[8:])])
    optimizer, loss_fn, total = RecordingSGD(probe.parameters()), probe.loss(nn.MSELoss()), 0.0
    for xb, yb in probe_loader(x, y, 4):
        if zero_grad == "before":
            optimizer.zero_grad()
        loss = loss_fn(probe(xb.to("cpu")), yb.to("cpu"))
        loss.backward()
        if zero_grad == "after backward":
            optimizer.zero_grad()
        optimizer.step()
        total = total + keep(loss)
    del loss
    return probe, optimizer, want, total


def test_step_gradients_name_a_missing_or_misplaced_zero_grad():
    from helpers.probes_training import check_step_gradients

    _, optimizer, want, _ = _epoch()
    check_step_gradients(optimizer.gradients, want, "loop")
    _, optimizer, want, _ = _epoch(zero_grad="never")
    summed = "batch 1: expected that batch's own gradient, got the sum of the gradients of batches 0 to 1"
    with pytest.raises(AssertionError, match=summed + ".*call optimizer.zero_grad\\(\\) before each backward"):
        check_step_gradients(optimizer.gradients, want, "loop")
    _, optimizer, want, _ = _epoch(zero_grad="after backward")
    with pytest.raises(AssertionError, match="got all zeros"):
        check_step_gradients(optimizer.gradients, want, "loop")
    with pytest.raises(AssertionError, match="the number of optimizer.step\\(\\) calls for 4 batches"):
        check_step_gradients(optimizer.gradients, want + want[:1], "loop")


def test_losses_summed_with_their_graphs_are_caught_and_detached_ones_are_not():
    from helpers.probes_training import check_losses_let_go

    for keep in (lambda loss: loss.item(), lambda loss: loss.detach()):
        probe, *_ = _epoch(keep=keep)
        check_losses_let_go(probe, "loop")
        assert probe.graphs_held == [0, 1, 1] and probe.losses_alive == 0
    probe, _, _, total = _epoch(keep=lambda loss: loss)
    assert probe.graphs_held == [0, 1, 2] and probe.losses_alive == 3
    with pytest.raises(AssertionError, match="2 earlier batches' losses still held their graph.*loss.detach"):
        check_losses_let_go(probe, "loop")
    del total
    assert probe.losses_alive == 0


def _train_one_epoch(model, loader, loss_fn, optimizer, device, keep=lambda loss: loss.item(), move_y=True):
    model.train()
    total, count = 0.0, 0
    for x, y in loader:
        x, y = x.to(device), (y.to(device) if move_y else y)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total, count = total + keep(loss) * len(x), count + len(x)
    return float(total.detach() if torch.is_tensor(total) else total) / count


def _one_epoch_of_probes(fn):
    """probes_during(fn, ...) on one epoch's probes (10 samples in batches of 4): (fn's result, the LoopRecord)."""
    from helpers.probes_training import RecordingSGD, probes_during

    x, y = _data()
    torch.manual_seed(0)
    model = LoopProbe(nn.Linear(3, 1))
    return probes_during(fn, model, probe_loader(x, y, 4), model.loss(nn.MSELoss()), RecordingSGD(model.parameters()),
                         torch.device("cpu"))


def test_probes_during_returns_what_the_probes_saw_as_data():
    from helpers.probes_training import LoopRecord

    result, seen = _one_epoch_of_probes(_train_one_epoch)
    assert isinstance(result, float) and isinstance(seen, LoopRecord)
    assert seen.calls == [Call(True, True, True)] * 3 and seen.targets_moved == [True] * 3
    assert seen.graphs_held == [0, 1, 1] and seen.losses_alive == 0 and seen.unmoved == []
    assert len(seen.gradients) == 3 and len(seen.gradients[0]) == 4
    _, seen = _one_epoch_of_probes(lambda *args: _train_one_epoch(*args, keep=lambda loss: loss, move_y=False))
    assert seen.graphs_held == [0, 1, 2] and seen.unmoved_inputs == [f"y of loss call {i}" for i in range(3)]
    assert seen.unmoved_batches == [f"y of batch {i} (pass 0)" for i in range(3)] and seen.unmoved[3:] == \
        seen.unmoved_inputs


def _hide_the_wrong_epoch(model, loader, loss_fn, optimizer, device):
    """A wrong epoch (targets never moved, losses summed with their graphs, no zero_grad), each of the records that
    would show it attacked: rewritten, a key set around it and put back, the instance dicts replaced, the loss
    function pointed at another probe. None of it reaches the records the helper reads."""
    kept = {obj: obj.__dict__ for obj in (model, loader, loss_fn, optimizer)}
    for obj in kept:
        object.__setattr__(obj, "_record_key", object())
        obj.__dict__ = dict(obj.__dict__)
        obj._records = ()
    loss_fn.probe = LoopProbe(nn.Identity())
    total = 0.0
    for x, y in loader:
        loss = loss_fn(model(x.to(device)), y)
        loss.backward()
        optimizer.step()
        total = total + loss * len(x)
    for obj, was in kept.items():
        obj.__dict__ = was
    for obj, name in ((model, "calls"), (model, "targets_moved"), (model, "graphs_held"), (loader, "moved"),
                      (optimizer, "gradients")):
        getattr(obj, name).clear()                      # a copy
        with pytest.raises(AttributeError):
            setattr(obj, name, [])
        obj.__dict__[name] = []                         # does not shadow the record
    with pytest.raises(AttributeError):
        model.losses_alive = 0
    with pytest.raises(AttributeError):
        loader.yielded = 0
    return total.item() / 10, total


def test_code_handed_the_loop_probes_cannot_rewrite_or_refile_what_they_saw():
    """Issue 38: the loop probes' records were plain lists on the objects handed to train_one_epoch."""
    from helpers.probes_training import check_losses_let_go, check_step_gradients

    (_, total), seen = _one_epoch_of_probes(_hide_the_wrong_epoch)
    assert seen.targets_moved == [False] * 3 and seen.unmoved_inputs == [f"y of loss call {i}" for i in range(3)]
    assert seen.unmoved_batches == [f"y of batch {i} (pass 0)" for i in range(3)]
    assert seen.graphs_held == [0, 1, 2] and seen.losses_alive == 3 and len(seen.gradients) == 3
    with pytest.raises(AssertionError, match="still held their graph"):
        check_losses_let_go(seen, "loop")
    x, y = _data()
    torch.manual_seed(0)
    with pytest.raises(AssertionError, match="the sum of the gradients"):
        check_step_gradients(seen.gradients, _batch_gradients_of_a_fresh_probe(x, y), "loop")


def _batch_gradients_of_a_fresh_probe(x, y):
    from helpers.probes_training import batch_gradients

    return batch_gradients(nn.Linear(3, 1), nn.MSELoss(), [(x[:4], y[:4]), (x[4:8], y[4:8]), (x[8:], y[8:])])


def test_a_loss_function_carried_with_its_probe_files_with_it_and_a_pickle_carries_no_records():
    import copy
    import pickle

    probe = LoopProbe(nn.Linear(3, 1))
    loss_fn = probe.loss(nn.MSELoss())
    loss_fn(probe(torch.ones(2, 3)), torch.zeros(2, 1))
    carried_probe, carried_loss = pickle.loads(pickle.dumps((probe, loss_fn)))   # how course grade hands them over
    assert carried_probe.calls == [] and carried_probe.targets_moved == []
    carried_loss.probe = LoopProbe(nn.Identity())       # bound when unpickled: the attribute is not read again
    carried_loss(carried_probe(torch.ones(2, 3)), torch.zeros(2, 1))
    assert carried_probe.targets_moved == [True] and probe.targets_moved == [True]
    copy.deepcopy(carried_loss)(torch.zeros(2, 1), torch.zeros(2, 1))
    assert carried_probe.targets_moved == [True, True]


@pytest.mark.slow
def test_what_the_loop_probes_saw_comes_back_from_the_notebooks_process_as_data(tmp_path):
    import textwrap
    import time

    from grading_support import answer_kernel

    from course.grading.verdicts.connection import Connection
    from course.grading.verdicts.judge import Judge

    notebook = textwrap.dedent("""
        def train(model, loader, loss_fn, optimizer):
            total = 0.0
            for x, y in loader:
                loss = loss_fn(model(x.to("cpu")), y.to("cpu"))
                loss.backward()
                optimizer.step()
                total = total + loss
            return total.item()

        def forges(model, loader, loss_fn, optimizer):
            import torch
            from torch import nn
            from helpers.probes_training import LoopProbe
            total = 0.0
            for x, y in loader:
                loss_fn.probe = LoopProbe(nn.Identity())            # each record attacked, in the kernel
                object.__setattr__(model, "_record_key", object())
                kept, model.__dict__ = model.__dict__, dict(model.__dict__)
                loss = loss_fn(model(x.to("cpu")), y)
                loss.backward()
                optimizer.step()
                total = total + loss
                model.__dict__ = kept
            for obj in (model, loader, optimizer):
                obj.__dict__.update(calls=[], graphs_held=[], moved=[(i, n) for i in range(3) for n in "xy"],
                                    gradients=[])
            return total.item()
    """)
    listener, server = answer_kernel(tmp_path, notebook)
    try:
        sock, _ = listener.accept()
        with sock:
            outputs, failure = Judge().run(textwrap.dedent("""
                import torch
                from torch import nn
                from helpers.probes_training import LoopProbe, RecordingSGD, probe_loader, probes_during
                _model = LoopProbe(nn.Linear(3, 1))
                _optimizer = RecordingSGD(_model.parameters())
                _result, _seen = probes_during(train, _model, probe_loader(torch.randn(10, 3), torch.randn(10, 1), 4),
                                               _model.loss(nn.MSELoss()), _optimizer)
                assert isinstance(_result, float), _result
                assert len(_seen.gradients) == 3 and len(_seen.gradients[0]) == 4, _seen.gradients
                assert _seen.graphs_held == [0, 1, 2] and _seen.losses_alive == 0, _seen
                assert _seen.unmoved == [] and len(_seen.calls) == 3, _seen
                assert _model.calls == [] and _optimizer.gradients == []   # the judge's own probes: nothing noted here
                _model = LoopProbe(nn.Linear(3, 1))
                _, _seen = probes_during(forges, _model, probe_loader(torch.randn(10, 3), torch.randn(10, 1), 4),
                                         _model.loss(nn.MSELoss()), RecordingSGD(_model.parameters()))
                assert _seen.graphs_held == [0, 1, 2] and len(_seen.calls) == len(_seen.gradients) == 3, _seen
                assert _seen.unmoved == [f"y of batch {i} (pass 0)" for i in range(3)] + [
                    f"y of loss call {i}" for i in range(3)], _seen.unmoved
            """), "<test>", Connection(sock, time.monotonic() + 60))
        assert failure is None and not [o for o in outputs if o.output_type == "error"], outputs
    finally:
        server.kill()
        listener.close()


def test_graph_ops_during_counts_graph_building_that_the_functions_own_hooks_would_hide():
    """Issue 38 (held-out red team): the bytes saved, read through saved_tensors_hooks, were 0 for a forward pass
    with gradients on inside the function's own hooks (hooks nest: the innermost decides)."""
    from helpers.probes_training import graph_ops_during

    model, x = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2)), torch.randn(4, 3)

    def hidden(model, x):
        with torch.autograd.graph.saved_tensors_hooks(lambda t: None, lambda packed: packed):
            return model(x).argmax(1)

    def right(model, x):
        with torch.no_grad():
            return model(x).argmax(1)

    assert graph_ops_during(hidden, model, x) >= 3
    assert graph_ops_during(lambda m, x: m(x), model, x) >= 3
    assert graph_ops_during(right, model, x) == 0

    def on_a_copy(model, x):                    # a deep copy of the parameters joins no graph
        import copy
        with torch.no_grad():
            return copy.deepcopy(model).eval()(x).argmax(1)

    assert graph_ops_during(on_a_copy, model, x) == 0
    assert graph_ops_during(lambda m, x: torch.inference_mode()(m)(x), model, x) == 0


def test_graph_ops_during_counts_no_detaching_and_no_integer_results():
    """A correct accuracy that evaluates a deep copy made outside no_grad (fixtures/right_answers/02_training_loop/
    accuracy__deepcopy.py) detaches every parameter (`.data`) and makes no graph; counted below autograd, those
    detaches were taken for graph building and the answer lost its points. An argmax or a comparison of a
    forward's output records nothing either; the forward itself does."""
    import copy

    from helpers.probes_training import graph_ops_during

    torch.manual_seed(0)
    model, x = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)), torch.randn(5, 3)

    def deep_copy_then_no_grad(m, x):
        frozen = copy.deepcopy(m).eval()
        with torch.no_grad():
            return (frozen(x).argmax(dim=1) == 0).sum().item()

    def forgets_no_grad(m, x):
        return (m(x).argmax(dim=1) == 0).sum().item()

    assert graph_ops_during(deep_copy_then_no_grad, model, x) == 0
    assert graph_ops_during(forgets_no_grad, model, x) >= 3     # the two linear layers and the ReLU, at least
