"""`pretrain`'s defaults are the tiny shape a CPU finishes; `--config`
takes a bundled preset's name as a shape."""

import pytest

import keras_albert
from keras_albert.pipelines.pretraining import backbone_config
from keras_albert.pipelines.pretraining_settings import PretrainingSettings
from keras_albert.pipelines.pretraining_settings import check_pretraining_numbers
from keras_albert.pipelines.pretraining_settings import checkpoint_interval


def test_defaults_are_the_bundled_tiny_shape():
    settings = PretrainingSettings(corpus=[], output="")
    config = backbone_config(settings.config, settings.vocabulary_size, settings.max_seq_length)
    bundled = keras_albert.AlbertBackbone.from_preset("albert_tiny_en")
    assert keras_albert.AlbertBackbone(**config).count_params() == bundled.count_params() == 1_929_472
    assert (settings.max_seq_length, settings.batch_size, settings.train_steps) == (128, 32, 1000)
    assert checkpoint_interval(settings) == 100


@pytest.mark.parametrize("train_steps, interval", [(1000, 100), (20, 20), (150, 75), (6000, 100), (7, 7), (130, 65)])
def test_left_out_checkpoint_every_is_the_largest_divisor_up_to_100(train_steps, interval):
    settings = PretrainingSettings(corpus=[], output="o", train_steps=train_steps)
    assert checkpoint_interval(settings) == interval
    check_pretraining_numbers(settings)
    # Given, it is kept as given (and checked).
    given = PretrainingSettings(corpus=[], output="o", train_steps=train_steps, checkpoint_every=1)
    assert checkpoint_interval(given) == 1


@pytest.mark.parametrize("train_steps, suggested", [(997, 1000), (101, 100)])
def test_a_train_steps_without_a_usable_divisor_asks_for_checkpoint_every(train_steps, suggested):
    # Its only divisor up to 100 is 1: a checkpoint after every step.
    settings = PretrainingSettings(corpus=[], output="o", train_steps=train_steps)
    with pytest.raises(ValueError) as error:
        check_pretraining_numbers(settings)
    assert str(error.value) == (
        f"`--train_steps={train_steps}` has no divisor from 10 to 100 to checkpoint at (each checkpoint "
        f"closes an epoch). Pass --checkpoint_every (a divisor of --train_steps), or a --train_steps such "
        f"as {suggested}.")
    check_pretraining_numbers(PretrainingSettings(corpus=[], output="o", train_steps=train_steps, checkpoint_every=1))


def test_a_bundled_shape_takes_the_runs_positions_and_vocabulary():
    config = backbone_config("albert_tiny_en", 500, 256)
    assert (config["num_layers"], config["hidden_dim"], config["embedding_dim"]) == (4, 256, 128)
    assert (config["vocabulary_size"], config["max_sequence_length"]) == (500, 256)
    assert not {"name", "trainable", "dtype"} & set(config)


def test_an_unknown_config_names_what_is_accepted():
    with pytest.raises(ValueError, match=r"a bundled preset's name \(\[.*'albert_tiny_en'"):
        backbone_config("albert_teeny", 500, 128)


@pytest.mark.parametrize("objective", ["mlm", "causal_lm"])
def test_bad_numbers_fail_before_anything_is_written(tmp_path, objective):
    from keras_albert.pipelines.pretraining import run_pretraining

    (tmp_path / "c.txt").write_text("The cat sat.\nIt was warm.\n", encoding="utf-8")
    settings = PretrainingSettings(corpus=[str(tmp_path / "c.txt")], output=str(tmp_path / "run"),
                                   objective=objective, train_steps=150, checkpoint_every=100)
    with pytest.raises(ValueError, match=r"`--checkpoint_every` must divide `--train_steps`.*--train_steps=150, "
                                         r"--checkpoint_every=100$"):
        run_pretraining(settings)
    assert not (tmp_path / "run").exists()
    # The masked-LM numbers bind the masked-LM objective only.
    odd = dict(max_seq_length=4, max_predictions_per_seq=20, train_steps=100)
    if objective == "mlm":
        with pytest.raises(ValueError, match=r"`--max_seq_length` must be >= 8"):
            check_pretraining_numbers(PretrainingSettings(corpus=[], output="o", objective=objective, **odd))
    else:
        check_pretraining_numbers(PretrainingSettings(corpus=[], output="o", objective=objective, **odd))


def test_a_corpus_without_text_is_refused_before_anything_is_written(tmp_path):
    from keras_albert.pipelines.pretraining import run_pretraining

    (tmp_path / "a.txt").write_text("\n \n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("", encoding="utf-8")
    settings = PretrainingSettings(corpus=[str(tmp_path / "*.txt")], output=str(tmp_path / "run"), train_steps=10)
    with pytest.raises(ValueError, match=r"^`corpus` holds no text: every line of its 2 file\(s\) \('.*a.txt', "
                                         r"'.*b.txt'\) is blank.$"):
        run_pretraining(settings)
    assert not (tmp_path / "run").exists()
    # One line of text anywhere is a corpus (what it is worth is the vocabulary's to say).
    (tmp_path / "b.txt").write_text("\n\nThe cat sat.\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^`--vocab_size=8000` is larger than the training text supports"):
        run_pretraining(settings)
