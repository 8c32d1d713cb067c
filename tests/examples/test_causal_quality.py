"""benchmarks/causal_quality.py and benchmarks/kneser_ney.py on a tiny
synthetic corpus and a tiny randomly initialised causal preset: finite
perplexities in a sensible order, a cloze that is right when the context
makes the word certain, NLTK's Kneser-Ney numbers kept, bad flags refused.

Also passes with TensorFlow blocked, as on the device machines:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/examples/test_causal_quality.py
"""

import itertools
import json
import math
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import causal_quality  # noqa: E402
import kneser_ney  # noqa: E402

# Each line ends with a word it names earlier, after a context that fixes
# it even for a 5-gram model: the adjective that only that word follows.
ANIMALS = {"cat": "grey", "dog": "brown", "hen": "red", "fox": "sly", "owl": "wise", "xylophonist": "loud"}
VOCABULARY = 32
LINES = [f"the {a} and the {b} sat on the mat near the {ANIMALS[a]} {a}."
         for a, b in itertools.permutations(ANIMALS, 2)]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A training text (documents split by blank lines), a cloze file and a
    tiny random causal preset with a vocabulary trained on the text."""
    import keras

    import keras_albert
    from keras_albert.data.sentencepiece_training import train_sentencepiece

    folder = tmp_path_factory.mktemp("causal_quality")
    train = folder / "train.txt"
    train.write_text("\n\n".join("\n".join(LINES[i: i + 5]) for i in range(0, len(LINES), 5)) + "\n")
    cloze = folder / "cloze.txt"
    cloze.write_text("\n".join(LINES[:6]) + "\nthis line is too short\n")
    proto = train_sentencepiece(LINES * 5, VOCABULARY)
    keras.utils.set_random_seed(1)
    backbone = keras_albert.AlbertBackbone(
        vocabulary_size=VOCABULARY, num_layers=2, num_heads=2, embedding_dim=8, hidden_dim=16,
        intermediate_dim=32, max_sequence_length=24, causal=True)
    tokenizer = keras_albert.AlbertTokenizer(proto=proto)
    preprocessor = keras_albert.AlbertCausalLMPreprocessor(tokenizer, sequence_length=24)
    keras_albert.AlbertCausalLM(backbone, preprocessor=preprocessor).save_to_preset(str(folder / "preset"))
    return {"folder": folder, "train": train, "cloze": cloze, "preset": folder / "preset"}


def base_flags(corpus, output):
    return ["--preset", str(corpus["preset"]), "--train_corpus", str(corpus["train"]),
            "--eval_corpus", str(corpus["train"]), "--cloze_text", str(corpus["cloze"]),
            "--cloze_min_context_words", "5", "--kn_carve_out_tokens", "40", "--kn_train_tokens", "0",
            "--batch_size", "4", "--output", str(output)]


def test_records_the_preset_and_kneser_ney_with_finite_ordered_perplexities(corpus, tmp_path):
    output = tmp_path / "quality.json"
    causal_quality.main(base_flags(corpus, output) + ["--models", "albert,kneser_ney"])
    record = json.loads(output.read_text())
    rows = record["models"]
    assert set(rows) == {"albert", "kneser_ney"}
    vocabulary = record["vocabulary_size"]
    assert vocabulary == record["uniform_perplexity"] == VOCABULARY
    assert rows["albert"]["tokens_scored"] == rows["kneser_ney"]["tokens_scored"] > 100  # the same targets
    for row in rows.values():
        assert math.isfinite(row["perplexity"]) and row["perplexity"] >= 1
        assert row["perplexity"] == pytest.approx(math.exp(row["loss_per_token"]), rel=1e-3)
    # Counted on the text it is scored on: far better than uniform, and than
    # an untrained network (about uniform).
    assert rows["kneser_ney"]["perplexity"] < vocabulary / 4
    assert rows["kneser_ney"]["perplexity"] < rows["albert"]["perplexity"]
    assert vocabulary / 3 < rows["albert"]["perplexity"] < vocabulary * 3
    by_discount = rows["kneser_ney"]["carve_out_perplexity_by_discount"]
    assert set(by_discount) == {"0.1", "0.25", "0.5", "0.75", "0.9", "1.0"}
    assert by_discount[str(rows["kneser_ney"]["discount"])] == min(by_discount.values())

    # The cloze: the six long lines qualify; the context fixes each word.
    assert record["cloze"]["passages"] == 6 and record["cloze"]["dropped"] == {"too few words": 1}
    assert rows["kneser_ney"]["cloze"]["correct"] == 6
    for row in rows.values():
        cloze = row["cloze"]
        assert cloze["n"] == 6 and cloze["wilson_95"][0] <= cloze["accuracy"] <= cloze["wilson_95"][1]
    assert set(record["cloze_differences_points"]) == {"albert_minus_kneser_ney"}
    assert record["settings"]["window_length"] == 24 and record["settings"]["kn_order"] == 5
    assert record["command"].startswith("python ") and str(ROOT) not in output.read_text()


@pytest.mark.large
def test_trains_gpt2_of_the_presets_size_and_reads_its_preset_back(corpus, tmp_path):
    output = tmp_path / "quality.json"
    causal_quality.main(base_flags(corpus, output) + [
        "--models", "albert,gpt2", "--train_gpt2_tokens", "960", "--gpt2_output", str(tmp_path / "gpt2"),
        "--train_batch_size", "4"])
    record = json.loads(output.read_text())
    rows = record["models"]
    gpt2 = rows["gpt2"]
    assert math.isfinite(gpt2["perplexity"]) and gpt2["tokens_scored"] == rows["albert"]["tokens_scored"]
    assert gpt2["training"]["tokens"] == 960 and gpt2["training"]["steps"] == 10
    assert gpt2["shape"]["num_layers"] == 2 and gpt2["shape"]["num_heads"] == 2
    assert gpt2["parameters"] == causal_quality.gpt2_parameters(VOCABULARY, 24, 2, gpt2["shape"]["hidden_dim"],
                                                                 gpt2["shape"]["intermediate_dim"])
    assert gpt2["parameters_of_preset"] == rows["albert"]["parameters"]
    assert gpt2["cloze"]["n"] == 6 and set(record["cloze_differences_points"]) == {"albert_minus_gpt2"}

    # The saved GPT-2 preset scores the same when passed back.
    again = tmp_path / "again.json"
    causal_quality.main(base_flags(corpus, again) + [
        "--models", "gpt2", "--gpt2_preset", str(tmp_path / "gpt2")])
    reloaded = json.loads(again.read_text())["models"]["gpt2"]
    assert reloaded["perplexity"] == pytest.approx(gpt2["perplexity"], rel=1e-4)
    assert reloaded["parameters"] == gpt2["parameters"]
    assert reloaded["training"] == {key: value for key, value in gpt2["training"].items() if key != "preset"}


    # A time budget stops the training early, and the record says so.
    budgeted = tmp_path / "budgeted.json"
    causal_quality.main(base_flags(corpus, budgeted) + [
        "--models", "gpt2", "--train_gpt2_tokens", "960", "--gpt2_output", str(tmp_path / "gpt2_budgeted"),
        "--train_batch_size", "4", "--time_budget_minutes", "1e-9"])
    training = json.loads(budgeted.read_text())["models"]["gpt2"]["training"]
    assert training["stopped_by_time_budget"] is True
    assert training["steps"] == 1 and training["tokens"] == 96 and training["requested_tokens"] == 960


def counted_model(ids, order=3, discount=0.75, uniform_floor=True, vocabulary_size=12):
    model = kneser_ney.new_model(order, discount, vocabulary_size, uniform_floor=uniform_floor)
    kneser_ney.add_text(model, ids)
    model.estimator.build_index()
    return model


def test_indexed_kneser_ney_gives_nltks_scores():
    from nltk.lm import KneserNeyInterpolated
    from nltk.util import everygrams

    ids = np.random.default_rng(0).integers(0, 6, 400).tolist()
    ours = counted_model(ids, uniform_floor=False)
    stock = KneserNeyInterpolated(3, discount=0.75)  # NLTK looks up strings only
    stock.fit([everygrams([str(i) for i in ids], max_len=3)], vocabulary_text=[str(i) for i in range(12)])
    compared = 0
    for context in itertools.product(range(6), repeat=2):
        for word in range(6):
            try:
                expected = stock.unmasked_score(str(word), tuple(map(str, context)))
            except ZeroDivisionError:  # NLTK's undefined case (the stream's start)
                continue
            assert ours.unmasked_score(word, context) == pytest.approx(expected, rel=1e-12)
            compared += 1
    assert compared > 150


def test_uniform_floor_gives_a_distribution_and_most_likely_is_the_argmax():
    ids = np.random.default_rng(1).integers(0, 8, 300).tolist()
    model = counted_model(ids, order=4)
    for context in [(), (3,), (1, 2), (5, 5, 5), (11, 10, 9)]:
        scores = [kneser_ney.probability(model, word, context) for word in range(12)]
        # Unseen pieces (8..11) get the floor, not zero; the whole sums to 1.
        assert min(scores) > 0 and sum(scores) == pytest.approx(1.0, abs=1e-9)
        assert kneser_ney.most_likely(model, context) == int(np.argmax(scores))


def test_counting_only_the_needed_ngrams_keeps_every_needed_probability():
    ids = np.random.default_rng(2).integers(0, 7, 3000).tolist()
    queries = [ids[start: start + length] for start, length in zip(range(0, 600, 37), itertools.cycle(range(6)))]
    needed = kneser_ney.needed_contexts(queries, 4)
    full = counted_model(ids, order=4)
    filtered = kneser_ney.new_model(4, 0.75, 12)
    kneser_ney.add_text(filtered, ids, needed)
    filtered.estimator.build_index()
    assert filtered.counts.N() < full.counts.N()  # fewer n-grams counted
    for context in queries:
        for word in range(12):
            assert kneser_ney.probability(filtered, word, context) == pytest.approx(
                kneser_ney.probability(full, word, context), rel=1e-12)
        assert kneser_ney.most_likely(filtered, context) == kneser_ney.most_likely(full, context)


def test_sample_documents_keeps_the_carve_out_apart_within_budget():
    documents = [np.full(10, index) for index in range(20)]
    carve, training = causal_quality.sample_documents(documents, 35, 15, seed=3)
    assert sum(map(len, carve)) == 15 and sum(map(len, training)) == 35
    assert not {int(d[0]) for d in carve} & {int(d[0]) for d in training}
    _, everything = causal_quality.sample_documents(documents, 0, 15, seed=3)
    assert sum(map(len, everything)) == 200 - 20  # the rest of a cut carve-out document is unused


class _Oracle:
    """Logits that put each input's next token first and, at the last real
    position, `after` (a piece that ends or continues the word)."""

    def __init__(self, after):
        self.after = after

    def predict_on_batch(self, x):
        token_ids, mask = x["token_ids"], x["padding_mask"]
        logits = np.zeros(token_ids.shape + (VOCABULARY,), np.float32)
        for row in range(len(token_ids)):
            length = int(mask[row].sum())
            for position in range(length - 1):
                logits[row, position, token_ids[row, position + 1]] = 1
            logits[row, length - 1, self.after] = 1
        return logits


def test_neural_cloze_follows_every_piece_then_needs_the_word_to_end(corpus):
    vocabulary = causal_quality.Vocabulary(corpus["preset"])
    passages, _ = causal_quality.cloze_passages(LINES, vocabulary, 24, 5)
    assert any(len(passage.word_ids) > 1 for passage in passages)  # a word of several pieces
    continues = vocabulary.continues_word()
    ending = vocabulary.end_id
    going_on = int(np.flatnonzero(continues)[0])
    assert all(causal_quality.neural_cloze(_Oracle(ending), passages, continues, 24, 4))
    assert not any(causal_quality.neural_cloze(_Oracle(going_on), passages, continues, 24, 4))


@pytest.mark.parametrize("flags, message", [
    (["--models", "albert,bert"], "--models must name some of"),
    (["--kn_order", "0"], "--kn_order must be a positive integer; got 0"),
    (["--kn_discounts", "0.5,1.5"], "--kn_discounts must be comma-separated numbers in (0, 1]"),
    (["--window_length", "1"], "--window_length must be at least 2; got 1"),
    (["--models", "gpt2"], "--models includes gpt2: give either --gpt2_preset"),
    (["--models", "gpt2", "--train_gpt2_tokens", "100"], "--train_gpt2_tokens needs --gpt2_output"),
    (["--models", "albert", "--eval_corpus", "/no/such/file.npz"], "--eval_corpus '/no/such/file.npz' does not exist"),
    (["--models", "albert", "--gpt2_preset", "x"], "--gpt2_preset and --train_gpt2_tokens need gpt2"),
])
def test_bad_flags_exit_2_naming_the_flag(corpus, tmp_path, capsys, flags, message):
    with pytest.raises(SystemExit) as exit_info:
        causal_quality.main(base_flags(corpus, tmp_path / "x.json") + flags)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


def test_nltks_bound_on_distinct_ngrams_is_named_by_its_flag(corpus, tmp_path, capsys):
    from nltk.lm import counter

    bound = counter.MAX_NGRAMS
    with pytest.raises(SystemExit) as exit_info:
        causal_quality.main(base_flags(corpus, tmp_path / "x.json") + [
            "--models", "kneser_ney", "--kn_max_ngrams", "50"])
    assert exit_info.value.code == 2
    assert "--kn_max_ngrams 50: Refusing to count further" in capsys.readouterr().err
    assert counter.MAX_NGRAMS == bound  # NLTK's own bound is back


def test_a_preset_that_is_no_causal_lm_exits_2(corpus, tmp_path, capsys):
    flags = base_flags(corpus, tmp_path / "x.json")
    flags[1] = "albert_tiny_en"
    with pytest.raises(SystemExit) as exit_info:
        causal_quality.main(flags + ["--models", "albert"])
    assert exit_info.value.code == 2
    assert "--preset 'albert_tiny_en' is not an AlbertCausalLM preset" in capsys.readouterr().err


def test_an_existing_gpt2_output_is_refused(corpus, tmp_path, capsys):
    (tmp_path / "mine").mkdir()
    with pytest.raises(SystemExit) as exit_info:
        causal_quality.main(base_flags(corpus, tmp_path / "x.json") + [
            "--train_gpt2_tokens", "100", "--gpt2_output", str(tmp_path / "mine")])
    assert exit_info.value.code == 2 and "exists; name a new directory" in capsys.readouterr().err
    assert list((tmp_path / "mine").iterdir()) == []


@pytest.mark.large
def test_runs_on_jax_without_tensorflow(corpus, tmp_path):
    output = tmp_path / "jax.json"
    code = ("import sys\n"
            "for name in ('tensorflow', 'tensorflow_text', 'tf_keras'): sys.modules[name] = None\n"
            "sys.path.insert(0, 'benchmarks')\n"
            "import causal_quality\n"
            f"causal_quality.main({base_flags(corpus, output) + ['--models', 'albert,kneser_ney']!r})\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                            env={**os.environ, "KERAS_BACKEND": "jax"}, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    record = json.loads(output.read_text())
    assert record["backend"] == "jax" and "tensorflow" not in record["threads"]
    assert record["models"]["kneser_ney"]["cloze"]["correct"] == 6
