"""The model card: valid front matter for the hubs, the backend statement,
task and labels, metrics quoted from records, citations by architecture."""

import pathlib

import yaml

from keras_albert.export.model_card import CardFacts
from keras_albert.export.model_card import render_model_card
from keras_albert.export.preset_records import Record

BACKBONE = dict(num_layers=4, hidden_dim=128, embedding_dim=32, num_heads=4, intermediate_dim=256,
                sharing="all", vocabulary_size=8000, max_sequence_length=128, attention="full")


def _facts(**overrides):
    facts = dict(title="my model", description="A test model.", source="runs/x/preset",
                 task_class="AlbertClassifier", backbone_config=dict(BACKBONE),
                 backbone_parameters=414464, model_parameters=417818)
    return CardFacts(**{**facts, **overrides})


def front_matter(card):
    assert card.startswith("---\n")
    return yaml.safe_load(card.split("---\n")[1])


def test_front_matter_is_yaml_the_hubs_read():
    card = render_model_card(_facts(license="mit", language="en"))
    meta = front_matter(card)
    assert meta["library_name"] == "keras-hub"
    assert meta["license"] == "mit"
    assert meta["language"] == ["en"]
    assert meta["pipeline_tag"] == "text-classification"
    assert {"keras", "tensorflow", "keras_albert"} <= set(meta["tags"])
    assert "language" not in front_matter(render_model_card(_facts(language=None)))


def test_backend_statement_is_tensorflow_only():
    card = render_model_card(_facts())
    assert "**TensorFlow backend only**" in card
    assert "JAX and PyTorch backends are not supported and not tested" in card
    # keras-hub's generated card claims the opposite: never here.
    assert "can be used with JAX" not in card


def test_labels_are_listed_by_class_id():
    card = render_model_card(_facts(label_names=["neg", "pos"], label_source="saved with the model in task.json",
                                    files={"serving/": "SavedModel"}))
    assert "| 0 | neg |\n| 1 | pos |" in card
    assert "2 classes; their names are saved with the model in task.json" in card
    assert "outputs the predicted name as `labels`." in card
    assert "model.label_names[scores.argmax(-1)[0]]" in card
    unnamed = render_model_card(_facts())
    assert "outputs are class ids only" in unnamed


def test_regressor_token_classifier_and_encoder_tasks():
    assert "Task: text regression" in render_model_card(_facts(regression=True))
    tagger = render_model_card(_facts(task_class="AlbertTokenClassifier", label_names=["O", "B-PER"],
                                      label_source="x", files={"serving/": "SavedModel"}))
    assert front_matter(tagger)["pipeline_tag"] == "token-classification"
    assert "at the first piece of each word" in tagger and "predict_word_labels" in tagger
    encoder = render_model_card(_facts(task_class=None, files={"tfhub/": "modules"}))
    assert front_matter(encoder)["pipeline_tag"] == "feature-extraction"
    assert 'tf.saved_model.load(f"{path}/tfhub/encoder")' in encoder
    assert "keras_albert.AlbertBackbone.from_preset" in encoder


def test_metrics_and_provenance_come_from_the_records():
    record = Record(pathlib.Path("metrics.json"), "training_run/metrics.json", "finetuning", {
        "task": "classification", "preset": "albert_tiny_en", "selection_metric": "accuracy",
        "best_epoch": 2, "best": {"epoch": 2, "loss": 0.3, "accuracy": 0.8125, "f1_macro": 0.75},
        "history": [{}, {}, {}], "labels": ["neg", "pos"],
        "data": {"train": "train.tsv", "eval": "dev.tsv", "train_examples": 1200},
    })
    card = render_model_card(_facts(records=[record], training_data="Movie reviews, English."))
    assert "| accuracy | 0.8125 | `dev.tsv`, best epoch (`training_run/metrics.json`) |" in card
    assert "Fine-tuned from `albert_tiny_en`" in card and "1,200 examples of `train.tsv`" in card
    assert "epoch 2 of 3 kept" in card
    assert "Movie reviews, English." in card
    assert "so those scores are optimistic" in card
    empty = render_model_card(_facts())
    assert "No evaluation is recorded with this preset" in empty
    assert "Not recorded with this preset" in empty


def test_citations_follow_the_architecture():
    plain = render_model_card(_facts())
    assert "lan2020albert" in plain and "sun2020mobilebert" not in plain and "kitaev2020reformer" not in plain
    student = render_model_card(_facts(backbone_config=dict(BACKBONE, bottleneck_dim=64)))
    assert "sun2020mobilebert" in student
    lsh = render_model_card(_facts(backbone_config=dict(BACKBONE, attention="lsh")))
    assert "kitaev2020reformer" in lsh


def test_usage_names_the_handle():
    kaggle = render_model_card(_facts(handle="kaggle://me/albert/keras/tiny", files={"serving/": "x"}))
    assert 'from_preset("kaggle://me/albert/keras/tiny")' in kaggle
    assert 'kagglehub.model_download("me/albert/keras/tiny")' in kaggle
    hf = render_model_card(_facts(handle="hf://me/albert-tiny", files={"serving/": "x"}))
    assert 'huggingface_hub.snapshot_download("me/albert-tiny")' in hf
