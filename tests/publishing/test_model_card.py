"""The model card: metadata huggingface_hub reads back (library, licence,
base model, datasets, the model's own results), the backend statement, uses,
task and labels, training settings and limitations as the run recorded
them, citations by architecture."""

import pathlib

import yaml
from huggingface_hub import ModelCard

from keras_albert.publishing.model_card import CardFacts
from keras_albert.publishing.model_card import render_model_card
from keras_albert.publishing.preset_records import Record
from keras_albert.publishing.training_data_licences import PRESET_DATA

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
    card = render_model_card(_facts(license="mit", language="en", keras_hub_loadable=True))
    meta = front_matter(card)
    assert meta["library_name"] == "keras-hub"
    assert meta["license"] == "mit"
    assert meta["language"] == ["en"]
    assert meta["pipeline_tag"] == "text-classification"
    assert {"keras", "tensorflow", "keras_albert"} <= set(meta["tags"])
    assert "language" not in front_matter(render_model_card(_facts(language=None)))
    # A model keras-hub's own classes cannot hold names no keras-hub library.
    assert "library_name" not in front_matter(render_model_card(_facts()))
    assert "keras-hub" not in front_matter(render_model_card(_facts()))["tags"]


def test_backend_statement_names_every_backend_and_tensorflows_exports():
    # It said "TensorFlow backend only ... JAX and PyTorch not supported",
    # written before the models ran (and were tested) on every backend.
    card = render_model_card(_facts())
    assert "**every Keras backend**" in card
    assert "JAX and PyTorch (`KERAS_BACKEND=jax` or `torch`" in card and "not supported" not in card
    assert "Exports (serving SavedModels, TF-Hub modules, TFLite) are TensorFlow's" in card


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
    assert "it writes nothing" in encoder


def test_a_causal_lm_card_says_it_generates():
    card = render_model_card(_facts(task_class="AlbertCausalLM", files={"serving/": "SavedModel"}))
    assert front_matter(card)["pipeline_tag"] == "text-generation"
    assert "Task: causal language modelling" in card and "model.generate([" in card
    assert "serve(prompt=tf.constant([" in card and "Continuing English prompts" in card
    # The encoder's out-of-scope line would be false here; the generator's is said instead.
    assert "it writes nothing" not in card and "true or not" in card
    assert "It is not a classifier by itself" not in card


OLD_RECORD = {
    "task": "classification", "preset": "albert_tiny_en", "selection_metric": "accuracy",
    "best_epoch": 2, "best": {"epoch": 2, "loss": 0.3, "accuracy": 0.8125, "f1_macro": 0.75},
    "history": [{}, {}, {}], "labels": ["neg", "pos"],
    "data": {"train": "train.tsv", "eval": "dev.tsv", "train_examples": 1200},
}
# As finetune's recommended recipe records a run: a tenth of the training
# examples held out to choose the epoch, dev.tsv scored but never used to choose.
RECIPE_RECORD = {
    "task": "classification", "preset": "albert_tiny_en", "selection_metric": "validation_accuracy",
    "selection_data": "0.1 of the training examples, held out", "learning_rate": 0.001, "best_epoch": 3,
    "best": {"epoch": 3, "loss": 0.2, "accuracy": 0.8, "f1_macro": 0.79, "validation_accuracy": 0.9},
    "head_warm_start": {"epoch": 0}, "history": [{}, {}, {}, {}], "labels": ["neg", "pos"],
    "data": {"train": "train.tsv", "eval": "dev.tsv", "train_examples": 1080, "eval_examples": 200,
             "validation_examples": 120, "glue_task": None, "tfds": None},
}


def _record(data, kind="finetuning", name="training_run/metrics.json"):
    return Record(pathlib.Path(name), name, kind, data)


def test_metrics_and_provenance_come_from_the_records():
    card = render_model_card(_facts(records=[_record(OLD_RECORD)], training_data="Movie reviews, English."))
    assert "| accuracy | 0.8125 | `dev.tsv` | evaluation |  | `training_run/metrics.json` |" in card
    assert "Fine-tuned from `albert_tiny_en`" in card and "1,200 examples of `train.tsv`" in card
    assert "epoch 2 of 3 kept" in card
    assert "Movie reviews, English." in card
    # An old record chose the epoch on the data it reports: said so.
    assert "so those scores are optimistic" in card
    empty = render_model_card(_facts())
    assert "No evaluation of this model is recorded with this preset" in empty
    assert "Not recorded with this preset" in empty
    assert "No training settings are recorded with this preset." in empty


def test_a_recipe_run_card_parses_back_with_huggingface_hub(tmp_path):
    facts = _facts(records=[_record(RECIPE_RECORD)], title="Review sentiment", base_model="albert/albert-base-v2",
                   datasets=["stanfordnlp/sst2"], data_sources=list(PRESET_DATA["albert_tiny_en"]),
                   description="Says whether a review is positive.", label_names=["neg", "pos"],
                   label_source="saved with the model in task.json")
    (tmp_path / "README.md").write_text(render_model_card(facts), encoding="utf-8")
    card = ModelCard.load(tmp_path / "README.md")
    data = card.data
    assert data.license == "apache-2.0" and data.language == ["en"]
    assert data.pipeline_tag == "text-classification" and data.library_name is None
    assert data.base_model == "albert/albert-base-v2" and data.datasets == ["stanfordnlp/sst2"]
    assert data.model_name == "Review sentiment"
    results = {(r.metric_name, r.dataset_name, r.dataset_split): r.metric_value for r in data.eval_results}
    assert results == {
        ("accuracy", "dev.tsv", "evaluation"): 0.8, ("f1_macro", "dev.tsv", "evaluation"): 0.79,
        ("validation_accuracy", "train.tsv", "validation: 0.1 of the training examples, held out"): 0.9,
    }
    assert {r.metric_type for r in data.eval_results} == {"accuracy", "f1_macro"}
    text = card.text
    assert text.startswith("\n# Review sentiment\n\nSays whether a review is positive.")
    for section in ("## Intended uses", "## Out-of-scope uses", "## Training data", "## Training settings",
                    "## Evaluation", "## Bias, risks and limitations", "## Licence"):
        assert section in text, section
    assert "Assigning one of its 2 classes (`neg`, `pos`) to English texts" in text
    # The limitation says what the run did: the held-out tenth chose, dev.tsv did not.
    assert ("`finetune` chose the epoch it kept by validation_accuracy on 0.1 of the training examples, "
            "held out; the evaluation data's scores were reported, not used to choose.") in text
    assert "optimistic" not in text
    assert "accuracy 0.8000 was measured on 200 examples only: each one moves it by 0.5 points." in text
    # Hyper-parameters as recorded.
    assert "| peak learning rate | 0.001 | `training_run/metrics.json` |" in text
    assert "| epochs trained | 4 |" in text and "| head fitted on frozen features first (epoch 0) | yes |" in text
    # Data licences, WordNet's named.
    assert "WordNet 3.0 licence" in text and "`WORDNET_LICENSE`" in text and "public domain" in text


def test_a_run_without_validation_and_one_evaluated_on_its_training_file():
    record = dict(RECIPE_RECORD, selection_metric="last epoch", selection_data=None,
                  best={"epoch": 4, "accuracy": 0.7},
                  data=dict(RECIPE_RECORD["data"], eval="train.tsv", validation_examples=None))
    text = render_model_card(_facts(records=[_record(record)]))
    assert "No validation split was held out: `finetune` kept the last epoch without choosing" in text
    assert "It was evaluated on its own training file (`train.tsv`)" in text
    assert "optimistic" not in text and "chose the epoch it kept by" not in text


def test_a_student_report_gives_only_this_models_row():
    report = {"task": "supersenses", "fine_tuning": {"train_examples": 100, "test_examples": 50, "epochs": 2},
              "models": {"teacher": {"accuracy": 0.7}, "student, task-distilled": {"accuracy": 0.69},
                         "student without distillation": {"accuracy": 0.5}}}
    record = Record(pathlib.Path("student_report.json"), "student_report.json", "student_report", report,
                    own_row="student, task-distilled")
    card = ModelCard(render_model_card(_facts(records=[record])))
    [result] = card.data.eval_results
    assert (result.metric_name, result.metric_value) == ("accuracy", 0.69)
    assert "| accuracy | 0.6900 | supersenses | test split | 50 |" in card.text
    assert "0.7000" not in card.text and "0.5000" not in card.text
    assert "| teacher fine-tuning epochs | 2 | `student_report.json` |" in card.text
    # Which row is this model is unknown: no other model's figure is claimed.
    record.own_row = None
    assert ModelCard(render_model_card(_facts(records=[record]))).data.eval_results is None


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


def test_finetunes_recorded_settings_are_listed_as_training_settings():
    from keras_albert.pipelines.finetuning import FinetuneSettings
    from keras_albert.pipelines.finetuning import run_settings

    settings = FinetuneSettings(
        preset="albert_tiny_en", task="classification", train="train.tsv", eval="dev.tsv",
        output="out", epochs=5, batch_size=16, seed=7, sequence_length=64, warmup_fraction=0.2,
        validation_fraction=0.15,
    )
    record = dict(RECIPE_RECORD, settings=run_settings(settings))
    card = render_model_card(_facts(records=[_record(record)]))
    where = "`training_run/metrics.json`"
    for row in ("| preset | albert_tiny_en |", "| batch size | 16 |", "| seed | 7 |",
                "| epochs requested | 5 |", "| warmup fraction | 0.2 |", "| weight decay | 0.01 |",
                "| sequence length | 64 |", "| validation fraction | 0.15 |", "| peak learning rate | 0.001 |"):
        assert f"{row} {where} |" in card, row
    # A setting the run left to the recipe (the learning rate) is not
    # listed as asked for; the rate used is, once.
    assert "| learning rate |" not in card
    # Records from before `settings` still give their other rows.
    assert "| batch size |" not in render_model_card(_facts(records=[_record(RECIPE_RECORD)]))
