"""AlbertPretrainer fed from TFRecords through tf.data, as Google's data
is: `pretraining_dataset(...).map(pretraining_batch)`.

Needs TensorFlow (TFRecords and tf.data are TensorFlow's), on any Keras
backend: tf.data feeds JAX and PyTorch too. The pretrainer itself is
checked without TensorFlow in test_albert_pretrainer.py and
test_pretrainer_sentence_embedding.py.
"""

import keras
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow", reason="TFRecords and tf.data are TensorFlow's")

from keras_albert.data.pretraining_tfrecords import pretraining_dataset  # noqa: E402
from keras_albert.data.pretraining_tfrecords import write_pretraining_tfrecords  # noqa: E402
from keras_albert.models.albert_pretrainer import AlbertPretrainer  # noqa: E402
from keras_albert.models.albert_pretrainer import embedding_batch  # noqa: E402
from keras_albert.models.albert_pretrainer import pretraining_batch  # noqa: E402
from tests.models.test_albert_pretrainer import _backbone  # noqa: E402
from tests.models.test_albert_pretrainer import instance_arrays  # noqa: E402, F401 (fixture)
from tests.models.test_albert_pretrainer import pretraining_instances  # noqa: E402


@pytest.fixture(scope="module")
def instance_file(tmp_path_factory, sentencepiece_proto):
    path = str(tmp_path_factory.mktemp("instances") / "train.tfrecord")
    write_pretraining_tfrecords(pretraining_instances(sentencepiece_proto), path)
    return path


def test_tfrecords_read_back_as_the_arrays(instance_file, instance_arrays):  # noqa: F811
    # The other modules train on these arrays: the same instances, in order.
    batches = list(pretraining_dataset(instance_file, 16, is_training=False).take(2))
    for name, values in instance_arrays.items():
        read = np.concatenate([batch[name].numpy() for batch in batches])
        np.testing.assert_array_equal(read, values[:32], err_msg=name)


def test_embedding_batch_in_a_tf_data_map(instance_file):
    pretrainer = AlbertPretrainer(_backbone(), sentence_embedding_dim=6)
    token_ids = np.full((4, 8), 7, "int32")
    packed = {"token_ids": token_ids, "segment_ids": np.zeros_like(token_ids),
              "padding_mask": np.ones_like(token_ids, dtype=bool)}
    vectors = np.eye(6, dtype="float32")[:4]
    dataset = pretraining_dataset(instance_file, 4, is_training=False).map(
        pretraining_batch).map(embedding_batch(packed, vectors))
    x, y, weights = next(iter(dataset))
    assert x["embedding_padding_mask"].dtype == tf.int32
    np.testing.assert_array_equal(y["sentence_embedding"], vectors)
    np.testing.assert_array_equal(weights["sentence_embedding"], np.ones(4))
    outputs = pretrainer.predict_on_batch(x)
    assert outputs["sentence_embedding"].shape == (4, 6)


@pytest.mark.large
def test_training_on_tf_data_lowers_both_losses(instance_file):
    pretrainer = AlbertPretrainer(_backbone(), sentence_task="sop")
    pretrainer.compile(optimizer=keras.optimizers.Adam(3e-3))
    # Two fixed batches repeated: the losses must fall as they are learned.
    dataset = (
        pretraining_dataset(instance_file, 16, is_training=False)
        .take(2)
        .cache()
        .repeat()
        .map(pretraining_batch)
    )
    history = pretrainer.fit(dataset, steps_per_epoch=10, epochs=4, verbose=0).history
    assert history["mlm_loss"][-1] < history["mlm_loss"][0] - 0.5
    assert history["sentence_order_loss"][-1] < history["sentence_order_loss"][0]
    assert pretrainer.jit_compile is True
