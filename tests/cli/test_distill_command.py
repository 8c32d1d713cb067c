"""`python -m keras_albert distill` with a tiny random teacher."""

import json

import pytest

import keras_albert
from keras_albert.cli.main import main
from tests.conftest import synthetic_sentences

STUDENT = {
    "num_layers": 1, "num_heads": 2, "embedding_dim": 4, "hidden_dim": 8,
    "intermediate_dim": 8, "bottleneck_dim": 4, "num_feedforward_stacks": 1,
    "embedding_type": "trigram", "normalization": "no_norm", "activation": "relu",
}


@pytest.fixture(scope="module")
def teacher(tmp_path_factory, sentencepiece_proto):
    path = tmp_path_factory.mktemp("teacher")
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    backbone = keras_albert.AlbertBackbone(
        vocabulary_size=tokenizer.vocabulary_size(), num_layers=2, num_heads=2,
        embedding_dim=8, hidden_dim=16, intermediate_dim=16, max_sequence_length=32)
    keras_albert.AlbertMaskedLM(backbone).save_to_preset(str(path))
    tokenizer.save_to_preset(str(path))
    return str(path)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    sentences = synthetic_sentences(300)
    documents = ["\n".join(sentences[i:i + 10]) for i in range(0, 300, 10)]
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text("\n\n".join(documents) + "\n")
    return str(path)


def distill(teacher, corpus, output, *extra):
    return main([
        "distill", f"--teacher={teacher}", f"--student_config={json.dumps(STUDENT)}",
        f"--corpus={corpus}", f"--output={output}", "--train_steps=4",
        "--log_every=2", "--batch_size=4", "--sequence_length=16",
        "--max_predictions_per_seq=3", "--dupe_factor=1", "--shuffle_buffer_size=64", "--jit_compile=false",
        *extra,
    ])


@pytest.mark.large
def test_distill_writes_a_student_preset(teacher, corpus, tmp_path, capsys):
    output = tmp_path / "run"
    assert distill(teacher, corpus, output) == 0
    printed = capsys.readouterr().out
    assert "[final] step 2/4" in printed and "[final] step 4/4" in printed
    student = keras_albert.AlbertBackbone.from_preset(str(output / "preset"))
    assert student.bottleneck_dim == 4 and student.embedding_type == "trigram"
    assert student.vocabulary_size == 80  # from the teacher's tokenizer
    preprocessor = keras_albert.AlbertTextClassifierPreprocessor.from_preset(
        str(output / "preset"), sequence_length=16)
    assert preprocessor(["the cat sleeps."])["token_ids"].shape == (1, 16)
    masked_lm = keras_albert.AlbertMaskedLM.from_preset(str(output / "preset"))
    assert masked_lm.backbone.count_params() == student.count_params()
    metrics = json.loads((output / "metrics.json").read_text())
    assert [stage["stage"] for stage in metrics["stages"]] == [None]
    assert metrics["layer_map"] == [[0, 1]]
    assert not [p for p in output.iterdir() if ".partial" in p.name]


@pytest.mark.parametrize(
    "flag,expected",
    [
        ("--student_config={\"hidden_dim\": 0}", "student_config"),
        ("--student_config=[1, 2]", "student_config"),
        ("--student_config={\"widht\": 8}", "widht"),
        ("--layer_map={\"3\": 0}", "layer_map"),
        ("--train_steps=-1", "--train_steps"),
        ("--corpus=/no/such/corpus.txt", "/no/such/corpus.txt"),
        ("--sequence_length=64", "--sequence_length"),
    ],
)
def test_bad_input_exits_2_with_one_line(teacher, corpus, tmp_path, capsys, flag, expected):
    assert distill(teacher, corpus, tmp_path / "run", flag) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and error[0].startswith("error:") and expected in error[0]
