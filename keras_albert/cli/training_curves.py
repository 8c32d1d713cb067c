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
