"""One long-document row: settings checked, the model built, fine-tuned, scored, timed."""

import numpy as np
import pytest

from keras_albert.pipelines import ClassifierRecipe
from keras_albert.pipelines.long_documents import PROBE_STEPS
from keras_albert.pipelines.long_documents import LongDocumentSettings
from keras_albert.pipelines.long_documents import long_document_classifier
from keras_albert.pipelines.long_documents import long_document_recipe
from keras_albert.pipelines.long_documents import long_document_task
from keras_albert.pipelines.long_documents import run_long_document_row
from keras_albert.pipelines.long_documents import tfidf_long_document_row


@pytest.fixture(scope="module")
def tiny_task():
    # Passages of 62 pieces, 3 per novel and split: 18 to train on.
    return long_document_task("albert_tiny_en", 64, max_passages_per_class=3)


def test_settings_name_their_row_and_pick_buckets():
    assert LongDocumentSettings(sequence_length=512).name == "full-512"
    lsh = LongDocumentSettings(sequence_length=2048, attention="lsh", lsh_num_hashes=4)
    assert lsh.name == "lsh4-2048" and lsh.num_buckets == 64
    # A length that is no multiple of the chunk is padded to one.
    assert LongDocumentSettings(sequence_length=100, attention="lsh", lsh_chunk_length=64).num_buckets == 4
    assert LongDocumentSettings(attention="lsh", lsh_num_buckets=8).num_buckets == 8
    # Above 2 * chunk buckets, Reformer's two factors: hashing stays cheap.
    assert LongDocumentSettings(sequence_length=16384, attention="lsh").num_buckets == [16, 32]
    assert LongDocumentSettings().recipe.batch_size == 8


@pytest.mark.parametrize("arguments, message", [
    ({"sequence_length": 4}, "sequence_length"),
    ({"sequence_length": 512.0}, "sequence_length"),
    ({"attention": "sparse"}, "attention"),
    ({"preset": ""}, "preset"),
    ({"recipe": {"epochs": 1}}, "recipe"),
    ({"recipe": ClassifierRecipe(epochs=0)}, "epochs"),
    ({"max_hours": -1}, "max_hours"),
    ({"pooling": "max"}, "pooling"),
    ({"attention": "lsh", "lsh_num_hashes": 0}, "lsh_num_hashes"),
    ({"attention": "lsh", "lsh_num_buckets": 3}, "lsh_num_buckets"),
    ({"attention": "lsh", "sequence_length": 32, "lsh_chunk_length": 64}, "lsh_chunk_length"),
    ({"attention": "lsh", "lsh_num_chunks_after": -1}, "lsh_num_chunks_after"),
])
def test_bad_settings_are_named_before_any_work(arguments, message):
    with pytest.raises(ValueError, match=message):
        LongDocumentSettings(**arguments).check()


def test_classifier_reads_longer_inputs_with_lsh():
    settings = LongDocumentSettings(sequence_length=256, attention="lsh", lsh_num_hashes=2,
                                    lsh_chunk_length=32)
    classifier = long_document_classifier(settings, num_classes=6)
    backbone = classifier.backbone
    assert backbone.max_sequence_length == 256 and backbone.get_config()["attention"] == "lsh"
    assert classifier.preprocessor.sequence_length == 256
    # The head reads every token's output: [CLS] sees only its LSH bucket.
    assert classifier.pooling == "mean"
    assert long_document_classifier(
        LongDocumentSettings(sequence_length=64, pooling="cls"), num_classes=6).pooling == "cls"
    # Positions beyond the preset's 128 start as copies of the learned ones.
    table = next(w for w in backbone.weights if w.path.endswith("position_embeddings")).numpy()
    np.testing.assert_array_equal(table[128:], table[:128])
    assert classifier.predict(["a long passage " * 200, "short"], verbose=0).shape == (2, 6)


def test_tfidf_row_reads_the_truncated_passages(tiny_task):
    short = tfidf_long_document_row(tiny_task, 16)
    full = tfidf_long_document_row(tiny_task, 64)
    assert short["name"] == "tfidf-16" and short["status"] == "done"
    assert short["train_passages"] == 18 and short["test_passages"] == 18
    assert 0 <= short["accuracy"] <= 1 and 0 <= full["macro_f1"] <= 1


@pytest.mark.large
def test_rows_run_end_to_end_on_a_tiny_setting(tiny_task):
    recipe = long_document_recipe(epochs=2, batch_size=4)
    full = run_long_document_row(tiny_task, LongDocumentSettings(sequence_length=64, recipe=recipe), verbose=0)
    lsh = run_long_document_row(tiny_task, LongDocumentSettings(
        sequence_length=160, attention="lsh", lsh_num_hashes=2, lsh_chunk_length=16, recipe=recipe), verbose=0)
    for row in (full, lsh):
        assert row["status"] == "done"
        assert 0 <= row["accuracy"] <= 1 and 0 <= row["macro_f1"] <= 1
        assert row["train_passages"] == 18 and row["test_passages"] == 18
        # 5 steps an epoch (18 passages in 4s); all timed but the first.
        assert row["step_seconds"]["steps"] == 2 * 5 - 1
        assert 0 < row["step_seconds"]["min"] <= row["step_seconds"]["median"] <= row["step_seconds"]["max"]
        assert len(row["validation_accuracy"]) == row["epochs_run"] <= 2
    assert full["name"] == "full-64" and "lsh" not in full
    assert lsh["name"] == "lsh2-160" and lsh["lsh"]["num_buckets"] == 20


@pytest.mark.large
def test_a_row_over_its_time_budget_stops_and_records_the_projection(tiny_task):
    settings = LongDocumentSettings(sequence_length=64, recipe=long_document_recipe(epochs=3, batch_size=4),
                                    max_hours=1e-7)
    row = run_long_document_row(tiny_task, settings, verbose=0)
    assert row["status"] == "over_time_budget" and "accuracy" not in row
    assert row["step_seconds"]["steps"] == PROBE_STEPS
    assert row["projected_hours"] == pytest.approx(row["step_seconds"]["median"] * 15 / 3600, rel=0.01, abs=0.01)
