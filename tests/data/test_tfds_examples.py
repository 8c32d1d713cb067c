"""TFDS text datasets read locally (mocked data: no download here).

TensorFlow only (TFDS reads through it); skipped without it.
"""

import pytest

pytest.importorskip("tensorflow", reason="TFDS reads through TensorFlow")
import tensorflow_datasets as tfds  # noqa: E402

from keras_albert.data.tfds_examples import read_tfds  # noqa: E402


def test_reads_a_local_glue_dataset():
    with tfds.testing.mock_data(num_examples=6):
        examples = read_tfds("glue/mrpc", "train", text_keys=("sentence1", "sentence2"))
    assert len(examples.texts) == 6 and len(examples.text_pairs) == 6
    assert examples.label_set == ["equivalent", "not_equivalent"]
    assert set(examples.labels) <= set(examples.label_set)
    with tfds.testing.mock_data(num_examples=3):
        stsb = read_tfds("glue/stsb", "train", text_keys=("sentence1", "sentence2"))
    assert stsb.label_set is None and all(isinstance(v, float) for v in stsb.labels)


def test_missing_features_and_datasets_are_named(tmp_path):
    with tfds.testing.mock_data(num_examples=2):
        with pytest.raises(ValueError, match=r"no features \['text'\]"):
            read_tfds("glue/sst2", "train", text_keys=("text",))
    with pytest.raises(ValueError, match="never downloaded"):
        read_tfds("glue/sst2", "train", data_dir=str(tmp_path))
