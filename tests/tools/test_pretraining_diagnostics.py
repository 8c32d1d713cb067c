"""tools/pretraining_diagnostics.py: the measurements behind issue 17's plateau diagnosis."""

import numpy as np

import keras_albert
from keras_albert.data.pretraining_instances import PretrainingInstance
from keras_albert.data.pretraining_tfrecords import write_pretraining_tfrecords
from tests.scripts import load_script

diagnostics = load_script("tools/pretraining_diagnostics.py")


def _backbone():
    return keras_albert.AlbertBackbone(
        vocabulary_size=40, num_layers=2, num_heads=2, embedding_dim=8,
        hidden_dim=8, intermediate_dim=16, max_sequence_length=16)


class _Tokenizer:
    cls_token_id, sep_token_id = 2, 3

    def __call__(self, text):
        return [5 + len(word) % 30 for word in text.split()][:12]


def test_attention_report_measures_each_head_against_uniform():
    report = diagnostics.attention_report(_backbone(), _Tokenizer(), "a bb ccc dddd eeeee")
    assert report["tokens"] == 7
    assert np.isclose(report["uniform_entropy"], np.log(7))
    assert len(report["heads"]) == 4  # 2 layers x 2 heads
    for row in report["heads"]:
        assert 0 < row["entropy"] <= report["uniform_entropy"] + 1e-5
        assert 0 <= row["previous_token"] <= 1 and 0 <= row["next_token"] <= 1


def test_position_smoothness_is_one_for_identical_rows_and_near_zero_at_init():
    backbone = _backbone()
    assert abs(diagnostics.position_smoothness(backbone)) < 0.5
    backbone.embeddings.position_embeddings.assign(np.ones((16, 8), "float32"))
    assert np.isclose(diagnostics.position_smoothness(backbone), 1.0)


def test_sentence_order_balance_counts_labels(tmp_path):
    def instance(label):
        zeros = np.zeros(8, np.int32)
        return PretrainingInstance(zeros + 5, zeros + 1, zeros, zeros + 1, np.zeros(2, np.int32),
                                   np.zeros(2, np.int32), np.zeros(2, np.float32), label)

    path = str(tmp_path / "eval.tfrecord")
    write_pretraining_tfrecords([instance(1), instance(1), instance(1), instance(0)], [path])
    balance = diagnostics.sentence_order_balance(path)
    assert balance == {"instances": 4, "label_1_share": 0.75, "majority_accuracy": 0.75}


def test_fresh_pair_accuracy_draws_the_same_new_pairs_each_call(tmp_path):
    from keras_albert.data.sentencepiece_training import train_sentencepiece

    sentences = [f"the {animal} {verb} near the {place}." for animal in ("cat", "dog", "bird")
                 for verb in ("sat", "ran", "slept") for place in ("house", "river")]
    path = tmp_path / "text.txt"
    # Documents of six sentences, a blank line between them.
    path.write_text("\n\n".join("\n".join(sentences[i:i + 6]) for i in range(0, 18, 6)) + "\n")
    proto = train_sentencepiece(sentences, 24)
    backbone = keras_albert.AlbertBackbone(
        vocabulary_size=24, num_layers=1, num_heads=2, embedding_dim=8,
        hidden_dim=8, intermediate_dim=16, max_sequence_length=16)
    pretrainer = keras_albert.AlbertPretrainer(backbone)
    pretrainer.compile(jit_compile=False)

    def measure():
        return diagnostics.fresh_pair_accuracy(
            pretrainer, proto, str(path), max_instances=4, batch_size=2,
            max_seq_length=16, max_predictions_per_seq=3)

    first = measure()
    assert first["instances"] == 4
    assert 0 <= first["mlm_accuracy"] <= 1 and 0 <= first["sentence_order_accuracy"] <= 1
    assert measure() == first
