"""Raw-string TFLite: tokenizer and packing inside, checked against the
raw-string SavedModel, in every quantization mode."""

import keras
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text as tf_text

import keras_albert
from keras_albert.export import raw_string_tflite
from keras_albert.export import tflite_export
from keras_albert.export.folded_sentencepiece import folded_sentencepiece_proto
from keras_albert.export.raw_string_tflite import export_raw_string_tflite
from keras_albert.export.raw_string_tflite import run_raw_string_tflite
from keras_albert.export.serving_saved_model import export_serving_saved_model
from tests.conftest import synthetic_sentences

HELD_OUT = synthetic_sentences(200, seed=11)
# Text that exercises every preprocessing step the model's map now does.
ODD_TEXTS = [
    "",
    "   ",
    "  The\tCAT\n\nsleeps  ",
    "``Quoted'' text ```triple''''",
    "Émma ÉLINOR naïve café Straße İstanbul",
    "a \u0301 b\u00a0c\u2003d",
    "ﬁne ligature ① ＦＵＬＬＷＩＤＴＨ",
    "日本語 한국어 Ελληνικά русский",
    "nul\x00inside",
    "emoji 😀👍🏽",
    "\ufeffa leading byte order mark",
    "\ufeff\ufeff two marks and one \ufeffinside",
]


@pytest.fixture(scope="module")
def tokenizer(sentencepiece_proto):
    return keras_albert.AlbertTokenizer(proto=sentencepiece_proto)


def _classifier(tokenizer, config, truncate="round_robin", num_classes=4):
    # Seeded: the backbone's random weights decide how far apart the logits
    # of different texts are, and unseeded they came from whatever the
    # worker ran before (one full run drew a model whose texts all scored
    # alike, so int8 agreed on 4.5 % of argmaxes).
    keras.utils.set_random_seed(0)
    backbone = keras_albert.AlbertBackbone(**dict(config, vocabulary_size=80))
    pre = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16, truncate=truncate)
    model = keras_albert.AlbertClassifier(backbone, num_classes=num_classes, preprocessor=pre)
    # Spread the logits so argmaxes are decided, as in a trained model.
    kernel = model.output_dense.kernel
    kernel.assign(np.random.default_rng(0).normal(0, 2.0, kernel.shape))
    return model


@pytest.fixture(scope="module")
def classifier(tokenizer, tiny_backbone_config):
    return _classifier(tokenizer, tiny_backbone_config)


@pytest.mark.large
@pytest.mark.parametrize("lowercase", [True, False])
def test_folded_model_tokenizes_raw_text_like_albert_tokenizer(sentencepiece_proto, lowercase):
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto, lowercase=lowercase)
    fast = tf_text.FastSentencepieceTokenizer(folded_sentencepiece_proto(sentencepiece_proto, lowercase))
    texts = HELD_OUT[:50] + [t.upper() for t in HELD_OUT[:20]] + ODD_TEXTS
    expected = [list(ids) for ids in tokenizer(texts)]
    assert fast.tokenize(tf.constant(texts)).to_list() == expected
    # Without the folded map, the same fast tokenizer does differ.
    plain = tf_text.FastSentencepieceTokenizer(sentencepiece_proto).tokenize(tf.constant(texts)).to_list()
    assert plain != expected


def test_the_folded_map_covers_every_code_point_but_surrogates():
    from keras_albert.export import folded_sentencepiece

    points = folded_sentencepiece._code_points()
    assert len(points) == 0x110000 - 0x800 and (np.diff(points) > 0).all()
    assert points[0] == 0 and points[-1] == 0x10FFFF
    assert not ((points >= 0xD800) & (points < 0xE000)).any()
    # The points ALBERT's preprocessing changes, and only those.
    changed = folded_sentencepiece._preprocessed_code_points(True)
    assert changed[ord("A")] == "a" and changed[0x00E9] == "e" and ord("a") not in changed


@pytest.mark.large
def test_folding_keeps_a_models_own_normaliser(tmp_path, sentencepiece_proto):
    # Google's released vocabularies normalise with nmt_nfkc: that map must
    # still apply after ALBERT's preprocessing.
    import sentencepiece
    from sentencepiece import sentencepiece_model_pb2

    (tmp_path / "corpus.txt").write_text("\n".join(HELD_OUT))
    sentencepiece.SentencePieceTrainer.train(
        input=str(tmp_path / "corpus.txt"), model_prefix=str(tmp_path / "nfkc"), vocab_size=40,
        normalization_rule_name="nmt_nfkc", minloglevel=2,
    )
    nfkc, model = sentencepiece_model_pb2.ModelProto(), sentencepiece_model_pb2.ModelProto()
    nfkc.ParseFromString((tmp_path / "nfkc.model").read_bytes())
    model.ParseFromString(sentencepiece_proto)
    model.normalizer_spec.CopyFrom(nfkc.normalizer_spec)
    proto = model.SerializeToString()
    tokenizer = keras_albert.AlbertTokenizer(proto=proto)
    fast = tf_text.FastSentencepieceTokenizer(folded_sentencepiece_proto(proto))
    texts = HELD_OUT[:20] + ODD_TEXTS + ["soft\u00adhyphen", "ｈａｌｆ　ｗｉｄｔｈ"]
    assert fast.tokenize(tf.constant(texts)).to_list() == [list(ids) for ids in tokenizer(texts)]


@pytest.mark.large
@pytest.mark.parametrize("pair", [False, True])
def test_float32_matches_the_raw_string_saved_model(tmp_path, classifier, pair):
    texts = HELD_OUT[:40] + ODD_TEXTS
    pairs = list(reversed(texts)) if pair else None
    report = export_raw_string_tflite(
        classifier, tmp_path / "text.tflite", pair=pair, batch_size=3, check_texts=texts
    )
    assert report["max_abs_difference"] <= 1e-4 and report["raw_strings"]
    export_serving_saved_model(classifier, tmp_path / "sm", pair=pair, check_texts=texts[:4])
    serve = tf.saved_model.load(str(tmp_path / "sm")).signatures["serving_default"]
    inputs = {"text": tf.constant(texts)}
    if pair:
        inputs["text_pair"] = tf.constant(pairs)
    served = {k: v.numpy() for k, v in serve(**inputs).items()}
    got = run_raw_string_tflite((tmp_path / "text.tflite").read_bytes(), texts, pairs)
    assert set(got) == set(served) == {"logits", "probabilities"}
    for name in got:
        np.testing.assert_allclose(got[name], served[name], atol=1e-4)


@pytest.mark.large
def test_waterfall_truncation_of_long_pairs(tmp_path, tokenizer, tiny_backbone_config):
    model = _classifier(tokenizer, tiny_backbone_config, truncate="waterfall")
    long_texts = [" ".join(HELD_OUT[i : i + 3]) for i in range(0, 60, 3)]
    report = export_raw_string_tflite(
        model, tmp_path / "pair.tflite", pair=True, check_texts=long_texts + HELD_OUT[:10]
    )
    assert report["max_abs_difference"] <= 1e-4


@pytest.mark.large
@pytest.mark.parametrize("quantize", ["float16", "dynamic", "int8"])
def test_quantized_files_meet_their_thresholds(tmp_path, classifier, quantize):
    calibration = synthetic_sentences(100, seed=3)
    # int8 also gets 30 of its calibration texts to check: it leaves them
    # out and checks on HELD_OUT alone (one int8 conversion for both).
    extra = calibration[:30] if quantize == "int8" else []
    report = export_raw_string_tflite(
        classifier, tmp_path / f"{quantize}.tflite", quantize,
        check_texts=extra + HELD_OUT, representative_texts=calibration,
    )
    got = run_raw_string_tflite((tmp_path / f"{quantize}.tflite").read_bytes(), HELD_OUT)["logits"]
    expected = np.asarray(classifier.predict(HELD_OUT, verbose=0))
    if quantize == "float16":
        assert np.abs(got - expected).max() <= 1e-2
    else:
        assert (got.argmax(-1) == expected.argmax(-1)).mean() >= 0.99
        assert report["argmax_agreement"] >= 0.99
    if quantize == "int8":
        # It checks only texts it was not calibrated on.
        assert report["check_texts"] == 200 and report["check_texts_excluded_as_calibration"] == 30
        assert report["argmax_agreement"] == float((got.argmax(-1) == expected.argmax(-1)).mean())


@pytest.mark.large
def test_bad_inputs_write_nothing(tmp_path, classifier, tokenizer, tiny_backbone_config, monkeypatch):
    qa = keras_albert.AlbertQuestionAnswerer(
        keras_albert.AlbertBackbone(**dict(tiny_backbone_config, vocabulary_size=80)),
        preprocessor=keras_albert.AlbertQuestionAnswererPreprocessor(tokenizer, sequence_length=24),
    )
    with pytest.raises(ValueError, match="supports classifiers and regressors.*AlbertQuestionAnswerer"):
        export_raw_string_tflite(qa, tmp_path / "qa.tflite")
    with pytest.raises(ValueError, match="`batch_size` must be a positive int. Received: batch_size=0"):
        export_raw_string_tflite(classifier, tmp_path / "x.tflite", batch_size=0)
    with pytest.raises(ValueError, match="`batch_size` must be 1. Received: batch_size=4"):
        export_raw_string_tflite(classifier, tmp_path / "x.tflite", quantize="int8", batch_size=4)
    with pytest.raises(ValueError, match="`quantize` must be one of"):
        export_raw_string_tflite(classifier, tmp_path / "x.tflite", quantize="int4")
    with pytest.raises(ValueError, match=r"`sequence_length` must be an int in \[2, 32\]"):
        export_raw_string_tflite(classifier, tmp_path / "x.tflite", sequence_length=33)
    with pytest.raises(ValueError, match="is a directory"):
        export_raw_string_tflite(classifier, tmp_path)
    monkeypatch.setitem(tflite_export.FLOAT_TOLERANCE, "none", 0.0)
    previous = b"\x1c\x00\x00\x00TFL3previous"  # An earlier TFLite file's header.
    (tmp_path / "model.tflite").write_bytes(previous)
    with pytest.raises(ValueError, match="not written"):
        export_raw_string_tflite(classifier, tmp_path / "model.tflite", check_texts=HELD_OUT[:8])
    assert (tmp_path / "model.tflite").read_bytes() == previous
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.tflite"]


def test_int8_refuses_too_few_calibration_texts_before_converting(tmp_path, classifier, monkeypatch):
    monkeypatch.setattr(
        raw_string_tflite, "convert_raw_string", lambda *args, **kwargs: pytest.fail("converted")
    )
    with pytest.raises(ValueError, match=r"`representative_texts` holds 5 texts .*at least 100"):
        export_raw_string_tflite(classifier, tmp_path / "m.tflite", "int8", check_texts=HELD_OUT,
                                 representative_texts=HELD_OUT[:5])
    assert not list(tmp_path.iterdir())


@pytest.mark.large
def test_a_call_with_more_texts_than_the_batch_is_refused_in_one_line(tmp_path, classifier):
    from keras_albert.export.raw_string_tflite import raw_string_runner

    texts = HELD_OUT[:5]
    export_raw_string_tflite(classifier, tmp_path / "b2.tflite", batch_size=2, check_texts=texts)
    content = (tmp_path / "b2.tflite").read_bytes()
    runner, batch_size = raw_string_runner(content)
    assert batch_size == 2
    with pytest.raises(ValueError) as error:
        runner(text=np.array([t.encode() for t in texts[:3]], dtype=object))
    message = str(error.value)
    assert "\n" not in message and "takes exactly 2 texts" in message and "Received 3" in message
    assert "batches of 2" in message and "--batch_size 3" in message
    # The exact batch still runs; the splitting runner takes any number of
    # texts and gives each text the logits it gets on its own.
    runner(text=np.array([t.encode() for t in texts[:2]], dtype=object))
    together = run_raw_string_tflite(content, texts, runner=(runner, batch_size))["logits"]
    alone = [run_raw_string_tflite(content, [t], runner=(runner, batch_size))["logits"][0] for t in texts]
    np.testing.assert_allclose(together, np.stack(alone), atol=1e-5)
    with pytest.raises(ValueError, match="one text per text: received 1 pairs for 5 texts"):
        run_raw_string_tflite(content, texts, text_pairs=texts[:1], runner=(runner, batch_size))
