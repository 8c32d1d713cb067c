"""TF-Hub encoder + preprocessor modules: parity, hub.KerasLayer fine-tuning
in tf-keras, and loading back into AlbertBackbone."""

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_hub as hub

import keras_albert
from keras_albert.convert.converted_preset import load_preset_model
from keras_albert.convert.tf1_names import get_model_weights
from keras_albert.convert.tfhub_module import convert_tfhub_module
from keras_albert.export.tfhub_export import export_tfhub


@pytest.fixture(scope="module")
def exported(tmp_path_factory, sentencepiece_proto, tiny_backbone_config):
    backbone = keras_albert.AlbertBackbone(**dict(tiny_backbone_config, vocabulary_size=80))
    pretrainer = keras_albert.AlbertPretrainer(backbone, sentence_task="none")
    rng = np.random.default_rng(0)
    for variable in pretrainer.weights:
        variable.assign(rng.normal(0, 0.1, variable.shape).astype("float32"))
    path = tmp_path_factory.mktemp("hub") / "albert_hub"
    assert export_tfhub(pretrainer, sentencepiece_proto, path) <= 1e-5
    return pretrainer, path


TEXTS = ["The cat sleeps in the garden.", "Émma walks", ""]


@pytest.mark.large
def test_preprocessor_matches_ours_for_single_texts_and_pairs(exported, sentencepiece_proto):
    _, path = exported
    pre = hub.load(str(path / "preprocessor"))
    ours = keras_albert.AlbertTextClassifierPreprocessor(
        keras_albert.AlbertTokenizer(proto=sentencepiece_proto), sequence_length=128
    )
    single = pre(tf.constant(TEXTS))
    np.testing.assert_array_equal(single["input_word_ids"], ours(TEXTS)["token_ids"])
    tokens = pre.tokenize(tf.constant(TEXTS))
    pair = pre.bert_pack_inputs([tokens, tokens], tf.constant(20))
    expected = keras_albert.AlbertTextClassifierPreprocessor(ours.tokenizer, sequence_length=20)(x=(TEXTS, TEXTS))
    np.testing.assert_array_equal(pair["input_word_ids"], expected["token_ids"])
    np.testing.assert_array_equal(pair["input_type_ids"], expected["segment_ids"])
    np.testing.assert_array_equal(pair["input_mask"], expected["padding_mask"])


def test_encoder_and_mlm_match_keras(exported, sentencepiece_proto):
    pretrainer, path = exported
    encoder = hub.load(str(path / "encoder"))
    inputs = hub.load(str(path / "preprocessor"))(tf.constant(TEXTS))
    expected = pretrainer.backbone({
        "token_ids": inputs["input_word_ids"][:, :32], "segment_ids": inputs["input_type_ids"][:, :32],
        "padding_mask": inputs["input_mask"][:, :32],
    })
    short = {k: v[:, :32] for k, v in inputs.items()}
    outputs = encoder(short, False)
    np.testing.assert_allclose(outputs["pooled_output"], expected["pooled_output"], atol=1e-5)
    assert len(outputs["encoder_outputs"]) == pretrainer.backbone.num_layers
    positions = tf.constant([[1, 2], [1, 0], [0, 0]], tf.int32)
    mlm = encoder.mlm(dict(short, masked_lm_positions=positions), False)["mlm_logits"]
    theirs = pretrainer({**{"token_ids": short["input_word_ids"], "segment_ids": short["input_type_ids"],
                            "padding_mask": short["input_mask"]}, "mask_positions": positions})["mlm"]
    np.testing.assert_allclose(mlm, theirs, atol=1e-4)
    assert len(encoder.variables) > 0 and encoder.trainable_variables


@pytest.mark.large
def test_keras_layer_fine_tunes_in_tf_keras(exported):
    import tf_keras

    _, path = exported
    encoder = hub.KerasLayer(str(path / "encoder"), trainable=True)
    inputs = {n: tf_keras.Input(shape=(16,), dtype=tf.int32, name=n) for n in ("input_word_ids", "input_mask", "input_type_ids")}
    logits = tf_keras.layers.Dense(2)(encoder(inputs)["pooled_output"])
    model = tf_keras.Model(inputs, logits)
    model.compile(optimizer=tf_keras.optimizers.Adam(1e-2),
                  loss=tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    before = [v.numpy().copy() for v in encoder.trainable_variables]
    rng = np.random.default_rng(0)
    x = {"input_word_ids": rng.integers(5, 80, (16, 16)).astype("int32"),
         "input_mask": np.ones((16, 16), "int32"), "input_type_ids": np.zeros((16, 16), "int32")}
    model.fit(x, rng.integers(0, 2, 16), epochs=1, batch_size=8, verbose=0)
    changed = [not np.array_equal(a, v.numpy()) for a, v in zip(before, encoder.trainable_variables)]
    assert all(changed)


@pytest.mark.parametrize("source", ["export", "encoder"])
def test_the_export_converts_back_unaided_vocabulary_and_all(exported, tmp_path, sentencepiece_proto, source):
    # The depth is in no variable, and the tiny shape matches no official
    # ALBERT: it comes from the shape file the export writes; the vocabulary
    # from the preprocessor beside the encoder.
    pretrainer, path = exported
    convert_tfhub_module(path if source == "export" else path / "encoder", tmp_path / "preset")
    loaded = load_preset_model(tmp_path / "preset")
    assert loaded.backbone.num_layers == pretrainer.backbone.num_layers
    for name, array in get_model_weights(pretrainer).items():
        np.testing.assert_array_equal(get_model_weights(loaded)[name], array, err_msg=name)
    tokenizer = keras_albert.AlbertTokenizer.from_preset(str(tmp_path / "preset"))
    expected = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    np.testing.assert_array_equal(tokenizer(["the cat sleeps"]), expected(["the cat sleeps"]))


def test_layouts_tf_hub_cannot_hold_are_refused(tmp_path, tiny_backbone_config, sentencepiece_proto):
    backbone = keras_albert.AlbertBackbone(**dict(tiny_backbone_config, num_groups=2))
    with pytest.raises(ValueError, match="num_groups=2"):
        export_tfhub(backbone, sentencepiece_proto, tmp_path / "hub")
    assert not (tmp_path / "hub").exists()
