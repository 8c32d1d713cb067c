"""Training-curve plots: matplotlib is the optional `plots` extra."""

import builtins
import sys

import pytest

from keras_albert.pipelines import training_curves


def test_curves_are_written_with_matplotlib(tmp_path):
    pytest.importorskip("matplotlib")
    history = [{"epoch": 1, "loss": 1.0, "accuracy": 0.5}, {"epoch": 2, "loss": 0.5, "accuracy": 0.7}]
    path = training_curves.plot_training_curves(history, "accuracy", tmp_path / "curves.png")
    assert path.read_bytes().startswith(b"\x89PNG")


def test_the_fitted_head_is_epoch_zero_of_the_curves_on_both_splits():
    warm = {"epoch": 0, "loss": None, "accuracy": 0.6, "validation_accuracy": 1.0}
    history = [warm, {"epoch": 1, "loss": 0.4, "accuracy": 0.7, "validation_accuracy": 1.0}]
    series = training_curves.finetuning_curve_series(history, "accuracy")
    # No training loss before training; both splits' scores from epoch 0.
    assert series == {
        "training loss": [(1, 0.4)],
        "evaluation data accuracy": [(0, 0.6), (1, 0.7)],
        "validation split accuracy": [(0, 1.0), (1, 1.0)],
    }


@pytest.fixture
def without_matplotlib(monkeypatch):
    real_import = builtins.__import__

    def refuse(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    for name in [n for n in sys.modules if n == "matplotlib" or n.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(builtins, "__import__", refuse)


def test_missing_matplotlib_names_the_extra(without_matplotlib, tmp_path):
    with pytest.raises(ImportError, match=r"pip install keras-albert\[plots\]"):
        training_curves.pyplot()
    history = [{"epoch": 1, "loss": 1.0, "accuracy": 0.5}]
    with pytest.warns(UserWarning, match=r"keras-albert\[plots\]"):
        assert training_curves.plot_training_curves(history, "accuracy", tmp_path / "curves.png") is None
    assert not (tmp_path / "curves.png").exists()


@pytest.mark.large
def test_package_import_does_not_need_the_optional_extras():
    import subprocess

    code = (
        "import builtins, sys\n"
        "real = builtins.__import__\n"
        "def refuse(name, *a, **k):\n"
        "    if name.split('.')[0] in ('matplotlib', 'tensorflow_hub'):\n"
        "        raise ImportError(name)\n"
        "    return real(name, *a, **k)\n"
        "builtins.__import__ = refuse\n"
        "import keras_albert, keras_albert.pipelines, keras_albert.export, keras_albert.cli\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "ok" in result.stdout, result.stderr[-2000:]
