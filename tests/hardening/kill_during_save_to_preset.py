"""Saves a 5-class classifier over the preset at argv[1] and SIGKILLs itself
once the new task config and weights are written, before the backbone is."""

import os
import signal
import sys

from keras_hub.src.utils import preset_utils

import keras_albert


def kill_now(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)


tokenizer = keras_albert.AlbertTokenizer.from_preset("albert_tiny_en")
backbone = keras_albert.AlbertBackbone(
    vocabulary_size=8000, num_layers=1, num_heads=2, embedding_dim=8, hidden_dim=16,
    intermediate_dim=32, max_sequence_length=32,
)
task = keras_albert.AlbertClassifier(
    backbone, num_classes=5,
    preprocessor=keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16),
)
preset_utils.KerasPresetSaver.save_backbone = kill_now
task.save_to_preset(sys.argv[1])
