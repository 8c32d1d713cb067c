"""Exports a tiny classifier to argv[1] and SIGKILLs itself after the new
SavedModel is written but before it is checked and renamed into place."""

import os
import signal
import sys

import keras_albert
from keras_albert.data.sentencepiece_training import train_sentencepiece
from keras_albert.export import serving_saved_model
from tests.conftest import synthetic_sentences


def kill_now(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)


tokenizer = keras_albert.AlbertTokenizer(proto=train_sentencepiece(synthetic_sentences(), vocabulary_size=80))
backbone = keras_albert.AlbertBackbone(
    vocabulary_size=80, num_layers=1, num_heads=2, embedding_dim=8, hidden_dim=16,
    intermediate_dim=32, max_sequence_length=16,
)
task = keras_albert.AlbertClassifier(
    backbone, num_classes=2,
    preprocessor=keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16),
)
serving_saved_model._verify = kill_now
serving_saved_model.export_serving_saved_model(task, sys.argv[1])
