"""Training our tasks prints no warnings a user cannot act on.

Run in a fresh interpreter: warning filters are process-wide and pytest
resets them around each test, so only a clean process shows what a user sees.
"""

import os
import pathlib
import re
import subprocess
import sys
import textwrap

ROOT = pathlib.Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import warnings
    warnings.simplefilter("default")
    import numpy as np
    import tensorflow as tf
    import keras_albert

    backbone = keras_albert.AlbertBackbone(
        vocabulary_size=30, num_layers=1, num_heads=2, embedding_dim=8,
        hidden_dim=8, intermediate_dim=16, max_sequence_length=8)
    tagger = keras_albert.AlbertTokenClassifier(backbone, num_classes=2)
    tagger.compile(optimizer="adam", jit_compile=False)
    x = {"token_ids": np.ones((4, 8), "int32"), "segment_ids": np.zeros((4, 8), "int32"),
         "padding_mask": np.ones((4, 8), "int32")}
    y = np.zeros((4, 8), "int32")
    # A dataset with Keras' default shuffle=True, and in-memory arrays.
    tagger.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(2), epochs=1, verbose=0)
    tagger.fit(x, y, batch_size=2, epochs=1, verbose=0)
    # Raw texts, which keras-hub feeds through grain.
    classifier = keras_albert.AlbertClassifier(
        keras_albert.AlbertBackbone(
            vocabulary_size=8000, num_layers=1, num_heads=2, embedding_dim=8,
            hidden_dim=8, intermediate_dim=16, max_sequence_length=16),
        num_classes=2,
        preprocessor=keras_albert.AlbertTextClassifierPreprocessor.from_preset(
            "albert_tiny_en", sequence_length=16))
    classifier.compile(optimizer="adam", jit_compile=False)
    classifier.fit(["a cat", "a dog", "the sea", "a hat"], [0, 1, 0, 1], batch_size=2, epochs=1, verbose=0)
""")


def test_fit_shows_no_pooler_or_shuffle_warning():
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Gradients do not exist" not in result.stderr
    assert "`shuffle=True` was passed" not in result.stderr
    assert "is smaller than num_threads" not in result.stderr


def test_only_the_pooler_warning_is_silenced():
    from keras_albert.models.albert_backbone import POOLER_WITHOUT_GRADIENT

    tail = " when minimizing the loss."
    assert re.match(POOLER_WITHOUT_GRADIENT, "Gradients do not exist for variables "
                    "['pooler/dense/kernel', 'pooler/dense/bias']" + tail)
    assert re.match(POOLER_WITHOUT_GRADIENT, "Gradients do not exist for variables "
                    "['pooled_dense/kernel', 'pooled_dense/bias']" + tail)
    for other in (["dense/kernel"], ["head/kernel", "pooler/dense/kernel", "pooler/dense/bias"],
                  ["pooler/dense/kernel", "pooler/dense/bias", "head/bias"]):
        assert not re.match(POOLER_WITHOUT_GRADIENT, f"Gradients do not exist for variables {other}" + tail)



def test_import_prints_no_tensorflow_info_lines():
    result = subprocess.run(
        [sys.executable, "-c", "import keras_albert; keras_albert.AlbertBackbone"],
        env={k: v for k, v in dict(os.environ, PYTHONPATH=str(ROOT)).items() if k != "TF_CPP_MIN_LOG_LEVEL"},
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "cpu_feature_guard" not in result.stderr


def test_only_grains_read_ahead_notice_is_dropped():
    import logging

    def kept(message):
        record = logging.LogRecord("absl", logging.WARNING, __file__, 1, message, None, None)
        return all(f.filter(record) for f in logging.getLogger("absl").filters)

    import keras_albert.models.albert_backbone  # noqa: F401 (installs the filter)

    assert not kept("prefetch_buffer_size=8 is smaller than num_threads=16. This will limit ...")
    assert kept("Something else went wrong in absl.")
