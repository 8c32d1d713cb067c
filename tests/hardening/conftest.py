"""Shared pieces of the hardening tests: a tiny model on the bundled
vocabulary, a saved preset to damage, and a count of bad-input cases per
public entry point (printed at the end of the run)."""

import collections
import contextlib
import shutil
import signal

import pytest


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "entry_point(name): the public entry point a bad-input case targets"
    )


_COUNTS = collections.Counter()


def pytest_collection_modifyitems(items):
    for item in items:
        marker = item.get_closest_marker("entry_point")
        if marker is not None:
            _COUNTS[marker.args[0]] += 1


def pytest_terminal_summary(terminalreporter):
    if not _COUNTS:
        return
    terminalreporter.write_sep("-", "bad-input cases per entry point")
    for name, count in sorted(_COUNTS.items()):
        terminalreporter.write_line(f"{name:40s} {count}")
    terminalreporter.write_line(f"{'total':40s} {sum(_COUNTS.values())}")


def assert_names(error, *needles):
    """The message holds every needle: argument/file, bad value, what is accepted."""
    message = str(error.value if hasattr(error, "value") else error)
    missing = [needle for needle in needles if needle not in message]
    assert not missing, f"{missing} not in message: {message[:2000]}"


@contextlib.contextmanager
def no_hang(seconds=60):
    """Fails, instead of waiting forever, if the block blocks (a FIFO read)."""

    def timeout(signum, frame):
        raise TimeoutError(f"still running after {seconds} s: it hangs")

    previous = signal.signal(signal.SIGALRM, timeout)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="session")
def tokenizer():
    import keras_albert

    return keras_albert.AlbertTokenizer.from_preset("albert_tiny_en")


def tiny_backbone():
    import keras_albert

    # The bundled vocabulary (8000 pieces) with the smallest encoder.
    return keras_albert.AlbertBackbone(
        vocabulary_size=8000, num_layers=1, num_heads=2, embedding_dim=8,
        hidden_dim=16, intermediate_dim=32, max_sequence_length=32,
    )


@pytest.fixture(scope="session")
def classifier(tokenizer):
    import keras_albert

    preprocessor = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16)
    return keras_albert.AlbertClassifier(tiny_backbone(), num_classes=3, preprocessor=preprocessor)


@pytest.fixture(scope="session")
def classifier_preset(classifier, tmp_path_factory):
    path = tmp_path_factory.mktemp("presets") / "classifier"
    classifier.save_to_preset(str(path))
    return path


@pytest.fixture
def damaged_preset(classifier_preset, tmp_path):
    """A fresh copy of the classifier preset; `damage(file, fn)` edits one file."""
    copy = tmp_path / "preset"
    shutil.copytree(classifier_preset, copy)

    def damage(name, edit):
        edit(copy / name)
        return str(copy)

    return damage
