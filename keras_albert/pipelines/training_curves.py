"""A PNG of the training loss and the selection metric per epoch.

matplotlib is an optional dependency (`pip install keras-albert[plots]`): it
is imported on first use. Without it the plots are skipped with a warning
naming the extra, so a finished training run still writes its preset and
metrics.
"""

import warnings

PLOTS_EXTRA_HINT = "pip install keras-albert[plots]"


def pyplot():
    """matplotlib.pyplot with the file-only Agg backend; a clear ImportError
    naming the extra when matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError as error:
        raise ImportError(
            f"Training-curve plots need matplotlib, an optional dependency: {PLOTS_EXTRA_HINT}"
        ) from error
    matplotlib.use("Agg")  # files only; no display needed
    import matplotlib.pyplot as plt

    return plt


def _pyplot_or_warn(path):
    try:
        return pyplot()
    except ImportError as error:
        warnings.warn(f"{error}. Not writing {path}.", stacklevel=3)
        return None


def finetuning_curve_series(history, metric):
    """The lines `plot_training_curves` draws: `{label: [(epoch, value)]}`.

    `history` holds `finetune`'s rows (metrics.json's `head_warm_start`,
    epoch 0, then `history`): the training loss where an epoch trained,
    `metric` on the evaluation data, and on the validation split when the
    rows have `validation_<metric>`.
    """
    series = {
        "training loss": [(row["epoch"], row["loss"]) for row in history if row.get("loss") is not None],
        f"evaluation data {metric}": [(row["epoch"], row[metric]) for row in history if metric in row],
        f"validation split {metric}": [(row["epoch"], row[f"validation_{metric}"]) for row in history
                                       if f"validation_{metric}" in row],
    }
    return {label: points for label, points in series.items() if points}


def plot_training_curves(history, metric, path):
    """Writes `path`: the training loss (left) and `metric` on the
    evaluation data and the validation split (right), per epoch, epoch 0
    (the fitted head before fine-tuning) included; returns None, writing
    nothing, without matplotlib (see `pyplot`)."""
    plt = _pyplot_or_warn(path)
    if plt is None:
        return None
    series = finetuning_curve_series(history, metric)
    epochs = [row["epoch"] for row in history]
    figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    for label, points in series.items():
        axis, colour = (left, "tab:blue") if label == "training loss" else (
            right, "tab:green" if label.startswith("evaluation") else "tab:orange")
        axis.plot(*zip(*points), marker="o", color=colour, label=label)
    left.set(title="training loss", xlabel="epoch")
    right.set(title=metric, xlabel="epoch (0: the fitted head, before fine-tuning)" if 0 in epochs else "epoch")
    right.legend(fontsize=8)
    for axis in (left, right):
        axis.grid(alpha=0.3)
        axis.set_xticks(epochs)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def plot_pretraining_curve(rows, path, title="pretraining", stages=()):
    """MLM and sentence-order accuracy (and the teacher cosine, when trained),
    training and held-out, against tokens seen; returns None, writing
    nothing, without matplotlib (see `pyplot`).

    `stages`: `(tokens, label)` pairs marking where a continued run changed
    its recipe, drawn as numbered dotted lines with the labels listed below.
    """
    plt = _pyplot_or_warn(path)
    if plt is None:
        return None
    tokens = [row["tokens"] / 1e6 for row in rows]
    panels = [("mlm_accuracy", "masked-LM accuracy"),
              ("sentence_order_accuracy", "sentence-order accuracy")]
    if any("sentence_embedding_cosine" in row for row in rows):
        panels.append(("sentence_embedding_cosine", "cosine to the teacher's embedding"))
    legend_height = 0.15 * (len(stages) + 1) if stages else 0  # inches
    height = 3.8 + legend_height
    figure, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), height))
    for axis, (metric, name) in zip(axes, panels):
        for prefix, label, style in (("", "training", "-"), ("val_", "held-out", "o-")):
            points = [(t, row[prefix + metric]) for t, row in zip(tokens, rows)
                      if prefix + metric in row]
            if points:
                axis.plot(*zip(*points), style, label=label, markersize=3)
        for number, (start, _) in enumerate(stages, 1):
            axis.axvline(start / 1e6, color="grey", linestyle=":", linewidth=1)
            axis.annotate(str(number), (start / 1e6, 1), xycoords=("data", "axes fraction"),
                          xytext=(2, -10), textcoords="offset points", fontsize=8, color="grey")
        axis.set(title=name, xlabel="tokens seen (millions, padded)")
        axis.grid(alpha=0.3)
        axis.legend()
    figure.suptitle(title)
    if stages:
        legend = "\n".join(f"{n}. {label}" for n, (_, label) in enumerate(stages, 1))
        figure.text(0.01, 0.01, legend, fontsize=8, va="bottom")
        figure.tight_layout(rect=(0, legend_height / height, 1, 1))
    else:
        figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path
