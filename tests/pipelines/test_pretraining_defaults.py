"""`pretrain`'s defaults are the tiny shape a CPU finishes; `--config`
takes a bundled preset's name as a shape."""

import pytest

import keras_albert
from keras_albert.pipelines.pretraining import backbone_config
from keras_albert.pipelines.pretraining_settings import PretrainingSettings
from keras_albert.pipelines.pretraining_settings import check_pretraining_numbers


def test_defaults_are_the_bundled_tiny_shape():
    settings = PretrainingSettings(corpus=[], output="")
    config = backbone_config(settings.config, settings.vocabulary_size, settings.max_seq_length)
    bundled = keras_albert.AlbertBackbone.from_preset("albert_tiny_en")
    assert keras_albert.AlbertBackbone(**config).count_params() == bundled.count_params() == 1_929_472
    assert (settings.max_seq_length, settings.batch_size, settings.train_steps) == (128, 32, 1000)
    assert settings.train_steps % settings.checkpoint_every == 0


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
                                   objective=objective, train_steps=150)
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
