"""The pretraining input streams on both record formats: dynamic masking
draws new masks (the end-to-end resume after a kill with them:
tests/backends/test_pretrain_without_tensorflow.py's teacher test), and
its random replacements from the model's vocabulary (the tokenizer's,
which `--init_preset` fixes), not from `--vocab_size`."""

import itertools
import pathlib

import numpy as np
import pytest

from keras_albert.data.pretraining_instances import create_pretraining_instances
from keras_albert.models.albert_pretrainer import pretraining_batch
from keras_albert.pipelines import pretraining_inputs
from keras_albert.pipelines.pretraining_settings import PretrainingSettings
from tests.conftest import synthetic_sentences

VOCABULARY = 80


@pytest.fixture(params=[True, False], ids=["tfrecords", "numpy"])
def tfrecords(request, monkeypatch):
    """Both record formats: TFRecords (TensorFlow's) and NumPy arrays."""
    if request.param:
        pytest.importorskip("tensorflow")
    monkeypatch.setattr(pretraining_inputs, "uses_tfrecords", lambda: request.param)
    return request.param


def _instances(proto, sentences):
    texts = synthetic_sentences(sentences, seed=6)
    return create_pretraining_instances(
        [texts[i : i + 10] for i in range(0, len(texts), 10)], proto,
        max_seq_length=64, max_predictions_per_seq=10, seed=2,
    )


def _stream(instances, directory, tfrecords, **overrides):
    """Batches of `instances` written once to `directory` and read back
    with the settings' masking, as pretraining reads them."""
    settings = PretrainingSettings(**{
        **dict(corpus=["unused"], output=str(directory), vocabulary_size=30000, max_seq_length=64,
               max_predictions_per_seq=10, num_shards=1, dynamic_masking=True, batch_size=16,
               seed=4, shuffle_buffer_size=100),
        **overrides,
    })
    paths = pretraining_inputs.train_paths(settings, directory)
    if not all(pathlib.Path(path).exists() for path in paths):
        pretraining_inputs.write_instances(instances, paths)
    stream = pretraining_inputs.train_stream(
        settings, paths, 1, pretraining_batch, lambda dataset, skip: dataset,
        vocabulary_size=VOCABULARY,
    )(0)
    return stream.as_numpy_iterator() if tfrecords else stream


def test_dynamic_masking_replaces_with_ids_of_the_given_vocabulary(sentencepiece_proto, tmp_path, tfrecords):
    stream = _stream(_instances(sentencepiece_proto, 1200), tmp_path, tfrecords)
    replaced = 0
    for x, y, weights in itertools.islice(stream, 40):
        real = np.asarray(weights["mlm"]) > 0
        ids = np.take_along_axis(np.asarray(x["token_ids"]), np.asarray(x["mask_positions"]), axis=1)
        assert np.asarray(x["token_ids"]).max() < VOCABULARY
        replaced += (real & (ids != 4) & (ids != np.asarray(y["mlm"]))).sum()
    # About 1 in 10 predictions is a random id: enough to have drawn big ids.
    assert replaced > 200


def test_dynamic_masking_changes_the_stored_masks_and_repeats_by_seed(sentencepiece_proto, tmp_path, tfrecords):
    instances = _instances(sentencepiece_proto, 400)

    def first_batches(dynamic_masking):
        stream = _stream(instances, tmp_path, tfrecords, dynamic_masking=dynamic_masking, batch_size=8,
                         shuffle_buffer_size=1)
        return [(np.asarray(x["mask_positions"]), np.asarray(x["segment_ids"]), np.asarray(x["padding_mask"]))
                for x, _, _ in itertools.islice(stream, 3)]

    stored, dynamic = first_batches(False), first_batches(True)
    # The same instances in the same order (segments, lengths): only the masks differ.
    for (_, *layout), (_, *same_layout) in zip(stored, dynamic):
        assert all(np.array_equal(a, b) for a, b in zip(layout, same_layout))
    assert any(not np.array_equal(a[0], b[0]) for a, b in zip(stored, dynamic))
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(dynamic, first_batches(True)))
