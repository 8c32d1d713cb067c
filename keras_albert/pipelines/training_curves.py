"""A PNG of the training loss and the selection metric per epoch."""

import matplotlib

matplotlib.use("Agg")  # files only; no display needed

import matplotlib.pyplot as plt  # noqa: E402


def plot_training_curves(history, metric, path):
    """Writes `path` with loss (left) and `metric` on the eval set (right)."""
    epochs = [row["epoch"] for row in history]
    figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    left.plot(epochs, [row["loss"] for row in history], marker="o")
    left.set(title="training loss", xlabel="epoch")
    right.plot(epochs, [row[metric] for row in history], marker="o", color="tab:green")
    right.set(title=f"eval {metric}", xlabel="epoch")
    for axis in (left, right):
        axis.grid(alpha=0.3)
        axis.set_xticks(epochs)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def plot_pretraining_curve(rows, path, title="pretraining"):
    """MLM and sentence-order accuracy (and the teacher cosine, when trained),
    training and held-out, against tokens seen."""
    tokens = [row["tokens"] / 1e6 for row in rows]
    panels = [("mlm_accuracy", "masked-LM accuracy"),
              ("sentence_order_accuracy", "sentence-order accuracy")]
    if any("sentence_embedding_cosine" in row for row in rows):
        panels.append(("sentence_embedding_cosine", "cosine to the teacher's embedding"))
    figure, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 3.8))
    for axis, (metric, name) in zip(axes, panels):
        for prefix, label, style in (("", "training", "-"), ("val_", "held-out", "o-")):
            points = [(t, row[prefix + metric]) for t, row in zip(tokens, rows)
                      if prefix + metric in row]
            if points:
                axis.plot(*zip(*points), style, label=label, markersize=3)
        axis.set(title=name, xlabel="tokens seen (millions, padded)")
        axis.grid(alpha=0.3)
        axis.legend()
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path
