"""Unit tests of helpers.monitor: the epoch progress bar and the epoch slider."""

import builtins
from unittest import mock

import pytest
import torch

from helpers import monitor


def _without_tqdm():
    """Make `import tqdm...` fail, as on a machine where tqdm is not installed."""
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "tqdm" or name.startswith("tqdm."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    return mock.patch("builtins.__import__", fake_import)


def test_epoch_bar_without_tqdm_counts_every_epoch_and_prints_nothing(capsys):
    with _without_tqdm():
        bar = monitor.epoch_bar(7, desc="fit")
    assert isinstance(bar, monitor._HtmlBar)
    seen = []
    for epoch in bar:
        bar.set_postfix(train=0.123456, val=1, refresh=False)
        seen.append(epoch)
    assert seen == list(range(7)) and len(bar) == 7
    assert capsys.readouterr().out == ""        # outside IPython the fallback is silent


def test_html_bar_shows_progress_and_postfix():
    bar = monitor._HtmlBar(300, "degree-10 fit")
    bar.set_postfix(train=0.0146123, val=0.5, refresh=False)
    html = bar.html(150)
    assert '<progress value="150" max="300">' in html
    assert "degree-10 fit: 150/300" in html and "train=0.0146" in html and "val=0.5000" in html


def test_html_bar_updates_its_display_at_most_about_fifty_times():
    handle = mock.Mock()
    with mock.patch.object(monitor, "_display_handle", return_value=handle):
        assert list(monitor._HtmlBar(300, "fit")) == list(range(300))
    assert 1 <= handle.update.call_count <= 51
    last_html = handle.update.call_args[0][0].data
    assert "300/300" in last_html


def test_epoch_bar_uses_tqdm_when_installed():
    tqdm_auto = pytest.importorskip("tqdm.auto")
    bar = monitor.epoch_bar(3, desc="fit")
    assert isinstance(bar, tqdm_auto.tqdm)
    assert list(bar) == [0, 1, 2]


@pytest.mark.slow
def test_curve_figure_draws_points_curve_and_truth():
    x = torch.linspace(-1, 1, 11)
    fig = monitor.curve_figure(x, x**2, x[:3], x[:3], title="epoch 4", truth=x**2)
    ax = fig.axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == ["true function", "model"] and ax.get_title() == "epoch 4"
    assert len(ax.collections) == 1                                   # the scatter of training points
    assert monitor.figure_png(fig).startswith(b"\x89PNG")


def test_curve_slider_starts_at_the_best_epoch_and_redraws_when_moved():
    x = torch.linspace(-1, 1, 11)
    curves = torch.stack([k * x for k in range(5)])                   # 5 epochs
    box = monitor.curve_slider(x, curves, x[:3], x[:3], best_epoch=2, val_losses=[0.5, 0.4, 0.3, 0.35, 0.4])
    slider, image = box.children
    assert (slider.min, slider.max, slider.value) == (0, 4, 2)
    first = bytes(image.value)                                        # ipywidgets keeps it as a memoryview
    assert first.startswith(b"\x89PNG")
    slider.value = 4
    assert bytes(image.value) != first


def test_evaluate_is_the_eval_mode_mean_over_samples_without_gradients():
    """monitor.evaluate (given to notebook 02's fit): eval mode, no graph, each batch weighted by its size."""
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    x, y = torch.randn(10, 3) * 3 + 2, torch.randn(10, 1)
    model = nn.Sequential(nn.Linear(3, 8), nn.BatchNorm1d(8), nn.Dropout(0.5), nn.Linear(8, 1)).train()
    running = model[1].running_mean.clone()
    loader = DataLoader(TensorDataset(x, y), batch_size=4)              # 4, 4 and 2 samples
    got = monitor.evaluate(model, loader, nn.MSELoss(), torch.device("cpu"))
    assert type(got) is float
    assert model.training is False and torch.is_grad_enabled()
    assert torch.equal(model[1].running_mean, running)                  # batch norm's statistics untouched
    with torch.no_grad():
        want = nn.MSELoss()(model(x), y).item()
        per_batch = sum(nn.MSELoss()(model(xb), yb).item() for xb, yb in loader) / 3
    assert got == pytest.approx(want, rel=1e-6)
    assert abs(per_batch - want) > 1e-3                                 # a mean of batch means would fail here
