"""helpers.plot_reading: a figure read as data where it was drawn, and a training history's plot judged from
that data (notebook 02's plot_history)."""

import textwrap
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers.plot_reading import check_loss_plot, plot_facts, read_figure  # noqa: E402

# Best epoch 3; the training loss is lowest at the last epoch, 5.
HISTORY = {"train_loss": [1.0, 0.7, 0.5, 0.4, 0.35, 0.3], "val_loss": [1.1, 0.8, 0.6, 0.55, 0.7, 0.9],
           "best_epoch": 3}
TRAIN, VAL, BEST = HISTORY["train_loss"], HISTORY["val_loss"], HISTORY["best_epoch"]


def judged(draw):
    fig = draw()
    try:
        check_loss_plot(read_figure(fig), HISTORY, "plot")
    finally:
        plt.close("all")


def plain(mark=lambda ax: ax.axvline(BEST, color="grey"), epochs=range(6)):
    def draw():
        fig, ax = plt.subplots()
        ax.plot(list(epochs), TRAIN, label="training loss")
        ax.plot(list(epochs), VAL, label="validation loss")
        mark(ax)
        ax.set_xlabel("epoch")
        ax.set_ylabel("loss")
        ax.legend()
        return fig
    return draw


def two_axes():
    fig, (left, right) = plt.subplots(1, 2, sharey=True)
    left.plot(TRAIN, color="k")
    left.set_title("train")
    right.plot(VAL, "o-", color="r")
    right.set_title("validation")
    right.vlines(BEST, 0.2, 1.2)
    fig.supxlabel("epoch")
    fig.supylabel("MSE loss")
    return fig


def log_scale_scatter_point():
    fig, ax = plt.subplots()
    ax.plot(VAL, "--", label="val")           # validation first, then training
    ax.plot(TRAIN, label="train")
    ax.scatter([BEST], [VAL[BEST]], marker="*", s=200, color="gold", zorder=3)
    ax.set_yscale("log")
    ax.set(xlabel="Epoch", ylabel="Loss (log)")
    fig.legend()
    return fig


def from_one_with_markevery():
    fig, ax = plt.subplots()
    ax.plot(range(1, 7), TRAIN, label="Train")
    ax.plot(range(1, 7), VAL, marker="D", markevery=[BEST], label="Val")
    ax.set(xlabel="epoch (from 1)", ylabel="loss")
    ax.legend()
    return fig


def scatter_curves_with_span():
    fig, ax = plt.subplots()
    ax.scatter(range(6), TRAIN, label="train loss")
    ax.scatter(range(6), VAL, label="val loss")
    ax.axvspan(BEST - 0.4, BEST + 0.4, alpha=0.2)
    ax.set(xlabel="epoch", ylabel="loss")
    ax.legend()
    return fig


@pytest.mark.parametrize("draw", [plain(), two_axes, log_scale_scatter_point, from_one_with_markevery,
                                  scatter_curves_with_span, plain(lambda ax: ax.annotate("best", (BEST, VAL[BEST]))),
                                  plain(lambda ax: ax.plot([BEST], [TRAIN[BEST]], "kx"))],
                         ids=["axvline", "two-axes-vlines", "log-scatter-point", "from-one-markevery",
                              "scatter-curves-span", "annotate", "point-on-train-curve"])
def test_every_correct_way_to_draw_the_plot_passes(draw):
    judged(draw)


def stops_at_best():
    fig, ax = plt.subplots()
    ax.plot(TRAIN[:BEST + 1], label="train")
    ax.plot(VAL[:BEST + 1], label="val")
    ax.axvline(BEST)
    ax.set(xlabel="epoch", ylabel="loss")
    ax.legend()
    return fig


def cut_by_xlim():
    fig = plain()()
    fig.axes[0].set_xlim(0, BEST)
    return fig


def train_dropped():
    fig, ax = plt.subplots()
    ax.plot(VAL, label="val loss")
    ax.axvline(BEST)
    ax.set(xlabel="epoch", ylabel="loss")
    ax.legend()
    return fig


def mixed_numbering():
    fig, ax = plt.subplots()
    ax.plot(TRAIN, label="train loss")
    ax.plot(range(1, 7), VAL, label="val loss")
    ax.axvline(BEST)
    ax.set(xlabel="epoch", ylabel="loss")
    ax.legend()
    return fig


def labels_swapped():        # held-out red team: each curve labelled as the other kept full marks
    fig, ax = plt.subplots()
    ax.plot(TRAIN, label="validation loss")
    ax.plot(VAL, label="training loss")
    ax.axvline(BEST)
    ax.set(xlabel="epoch", ylabel="loss")
    ax.legend()
    return fig


def legend_list_swapped():
    fig, ax = plt.subplots()
    ax.plot(TRAIN)
    ax.plot(VAL)
    ax.axvline(BEST)
    ax.set(xlabel="epoch", ylabel="loss")
    ax.legend(["val loss", "train loss"])
    return fig


@pytest.mark.parametrize("draw, words", [
    (labels_swapped, "the curve of history\\['train_loss'\\] named in a legend"),
    (legend_list_swapped, "the curve of history\\['train_loss'\\] named in a legend"),
    (stops_at_best, "a line of all 6 values of history\\['train_loss'\\], past the best epoch.*only its first 4"),
    (cut_by_xlim, "the x range shown: expected every epoch, 0 to 5"),
    (train_dropped, "a line of history\\['train_loss'\\].*no line with those values"),
    (plain(lambda ax: ax.axvline(BEST + 1)), "a mark at the best epoch 3.*marks found are at x = \\[4.0\\]"),
    (plain(lambda ax: ax.axvline(5)), "a mark at the best epoch 3"),       # the lowest training loss
    (plain(lambda ax: ax.axhline(VAL[BEST])), "a mark at the best epoch 3"),
    (plain(lambda ax: ax.scatter([BEST], [0.1])), "a mark at the best epoch 3"),
    (plain(epochs=range(1, 7)), "a mark at the best epoch 4"),            # curves from 1, the mark at index 3
    (mixed_numbering, "both curves on the same epoch numbering"),
], ids=["labels-swapped", "legend-list-swapped",
        "stops-at-best", "xlim-cut", "train-dropped", "mark-one-late", "mark-at-lowest-train", "axhline",
        "point-off-the-curves", "curves-from-one-mark-from-zero", "mixed-numbering"])
def test_a_wrong_plot_fails_with_a_message_that_names_what_is_wrong(draw, words):
    with pytest.raises(AssertionError, match=words):
        judged(draw)


def test_a_plot_function_that_returns_nothing_is_told_to_return_the_figure():
    def draws_but_returns_nothing(history):
        plt.plot(history["train_loss"])

    facts = plot_facts(draws_but_returns_nothing, HISTORY)
    assert facts == {"returned": "None"}
    with pytest.raises(AssertionError, match="return the Figure.*expected a matplotlib Figure, got None"):
        check_loss_plot(facts, HISTORY, "plot_history(...)")
    plt.close("all")


def test_the_facts_are_plain_data_and_the_figure_is_closed():
    def draw(history):
        return plain()()

    facts = plot_facts(draw, HISTORY)
    assert plt.get_fignums() == []

    def plain_data(value):
        if isinstance(value, dict):
            return all(type(k) is str and plain_data(v) for k, v in value.items())
        if isinstance(value, list):
            return all(plain_data(v) for v in value)
        return type(value) in (str, float, int, bool, type(None))

    assert plain_data(facts)
    assert facts["axes"][0]["lines"][1]["y"] == VAL


@pytest.mark.slow
def test_a_plot_drawn_in_the_notebooks_process_is_judged_in_the_graders(tmp_path):
    from grading_support import answer_kernel

    from course.grading.verdicts.connection import Connection
    from course.grading.verdicts.judge import Judge

    notebook = textwrap.dedent("""
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        def plot_history(history):
            fig, ax = plt.subplots()
            ax.plot(history["train_loss"], label="train")
            ax.plot(history["val_loss"], label="val")
            ax.axvline(history["best_epoch"])
            ax.set(xlabel="epoch", ylabel="loss")
            ax.legend()
            return fig
    """)
    listener, server = answer_kernel(tmp_path, notebook)
    try:
        def run(test):
            sock, _ = listener.accept()
            with sock:
                return Judge().run(textwrap.dedent(test), "<test>", Connection(sock, time.monotonic() + 60))

        outputs, failure = run("""
            from helpers.plot_reading import check_loss_plot, plot_facts
            _history = {"train_loss": [1.0, 0.5, 0.4], "val_loss": [1.0, 0.6, 0.8], "best_epoch": 1}
            check_loss_plot(plot_facts(plot_history, _history), _history, "plot_history")
            _history["best_epoch"] = 2
            try:
                check_loss_plot(plot_facts(plot_history, {**_history, "best_epoch": 1}), _history, "plot_history")
            except AssertionError as error:
                assert "a mark at the best epoch 2" in str(error), error
            else:
                raise RuntimeError("a mark at the wrong epoch passed")
        """)
        assert failure is None and not [o for o in outputs if o.output_type == "error"], outputs
    finally:
        server.kill()
        listener.close()
