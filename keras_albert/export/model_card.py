"""The model card (README.md) of a published keras_albert model.

Front matter for Kaggle Models and the Hugging Face Hub (library, licence,
pipeline tag, tags), then: the model and its parameters, task and labels,
usage, files, training data and provenance, the metrics quoted from the
preset's records, the framework statement (TensorFlow backend only),
limitations, licence and citations. Every number comes from the preset, its
records or the loaded model; nothing is re-measured or invented here.
"""

import dataclasses
import json

from keras_albert.export.preset_records import describe_record

PIPELINE_TAGS = {
    "AlbertClassifier": "text-classification",
    "AlbertTokenClassifier": "token-classification",
    "AlbertQuestionAnswerer": "question-answering",
    "AlbertMultipleChoice": "multiple-choice",
    "AlbertMaskedLM": "fill-mask",
    "AlbertPretrainer": "fill-mask",
    None: "feature-extraction",
}
_TASK_WORDS = {
    "AlbertClassifier": "text classification",
    "AlbertTokenClassifier": "token classification (a label per word)",
    "AlbertQuestionAnswerer": "extractive question answering (answer spans)",
    "AlbertMultipleChoice": "multiple choice (a score per choice)",
    "AlbertMaskedLM": "masked language modelling",
    "AlbertPretrainer": "pretraining heads (masked LM and sentence order)",
    None: "an encoder (sequence and pooled outputs), no task head",
}
LICENSE_TITLES = {"apache-2.0": "Apache License 2.0", "mit": "MIT License"}
# (config key, what the card calls it), in the order a reader wants them.
_ARCHITECTURE = (
    ("num_layers", "layers"), ("hidden_dim", "hidden size H"),
    ("embedding_dim", "embedding size E (factorized V x E + E x H)"), ("num_heads", "attention heads"),
    ("intermediate_dim", "feed-forward size"), ("sharing", "parameter sharing across layers"),
    ("num_groups", "shared layer groups"), ("num_inner_repetitions", "blocks per group"),
    ("attention", "attention"), ("activation", "activation"), ("normalization", "normalization"),
    ("embedding_type", "embedding"), ("bottleneck_dim", "bottleneck size"),
    ("num_feedforward_stacks", "stacked feed-forward networks"),
    ("vocabulary_size", "vocabulary (SentencePiece pieces)"),
    ("max_sequence_length", "positions"), ("num_segments", "segments"),
)
CITATIONS = {
    "albert": """@inproceedings{lan2020albert,
  title = {{ALBERT}: A Lite {BERT} for Self-supervised Learning of Language Representations},
  author = {Lan, Zhenzhong and Chen, Mingda and Goodman, Sebastian and Gimpel, Kevin and
            Sharma, Piyush and Soricut, Radu},
  booktitle = {International Conference on Learning Representations (ICLR)},
  year = {2020}
}""",
    "mobilebert": """@inproceedings{sun2020mobilebert,
  title = {{MobileBERT}: a Compact Task-Agnostic {BERT} for Resource-Limited Devices},
  author = {Sun, Zhiqing and Yu, Hongkun and Song, Xiaodan and Liu, Renjie and Yang, Yiming and
            Zhou, Denny},
  booktitle = {Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics},
  year = {2020}
}""",
    "reformer": """@inproceedings{kitaev2020reformer,
  title = {Reformer: The Efficient Transformer},
  author = {Kitaev, Nikita and Kaiser, {\\L}ukasz and Levskaya, Anselm},
  booktitle = {International Conference on Learning Representations (ICLR)},
  year = {2020}
}""",
}


@dataclasses.dataclass
class CardFacts:
    """What the card states, gathered by `publishing.publish_preset`."""

    title: str
    description: str
    source: str
    task_class: str  # None for a backbone alone
    backbone_config: dict
    backbone_parameters: int
    model_parameters: int
    regression: bool = False
    label_names: list = None
    label_source: str = None
    sequence_length: int = None
    lowercase: bool = None
    records: list = dataclasses.field(default_factory=list)
    files: dict = dataclasses.field(default_factory=dict)  # path -> what it is
    not_exported: list = dataclasses.field(default_factory=list)  # sentences
    metadata: dict = dataclasses.field(default_factory=dict)
    license: str = "apache-2.0"
    language: str = "en"
    handle: str = None
    training_data: str = None
    limitations: list = dataclasses.field(default_factory=list)
    versions: dict = dataclasses.field(default_factory=dict)


def pipeline_tag(facts):
    return PIPELINE_TAGS.get(facts.task_class, "feature-extraction")


def _front_matter(facts):
    # JSON string literals are valid YAML scalars: no YAML library needed.
    tags = ["keras", "keras-hub", "keras_albert", "albert", "tensorflow", pipeline_tag(facts)]
    lines = ["---", "library_name: keras-hub", f"license: {facts.license}"]
    if facts.language:
        lines += ["language:", f"- {json.dumps(facts.language)}"]
    lines += [f"pipeline_tag: {pipeline_tag(facts)}", "tags:"] + [f"- {json.dumps(tag)}" for tag in tags]
    return "\n".join(lines + ["---"])


def _architecture(facts):
    config = facts.backbone_config
    rows = [(label, config[key]) for key, label in _ARCHITECTURE if config.get(key) not in (None, {}, "")]
    if config.get("attention_kwargs"):
        rows.append(("attention options", json.dumps(config["attention_kwargs"], sort_keys=True)))
    rows += [("backbone parameters", f"{facts.backbone_parameters:,}"),
             ("parameters with the task head", f"{facts.model_parameters:,}")]
    if facts.sequence_length:
        rows.append(("preprocessor sequence length", facts.sequence_length))
    table = ["| | |", "|---|---|"] + [f"| {label} | {value} |" for label, value in rows]
    return ["## Model", "", f"ALBERT (`keras_albert.{facts.task_class or 'AlbertBackbone'}`), "
            "a keras-hub preset.", ""] + table


def _task(facts):
    words = _TASK_WORDS.get(facts.task_class, facts.task_class)
    if facts.regression:
        words = "text regression (one unsquashed score)"
    lines = ["## Task and labels", "", f"Task: {words}."]
    if facts.label_names:
        served = ""
        if "serving/" in facts.files:
            where = " at the first piece of each word" if facts.task_class == "AlbertTokenClassifier" else ""
            served = f" The serving SavedModel outputs the predicted name as `labels`{where}."
        lines += ["", f"{len(facts.label_names)} classes; their names are {facts.label_source}, and in "
                  f"`labels.txt` (line i names class id i).{served}",
                  "", "| class id | label |", "|---|---|"]
        lines += [f"| {i} | {name} |" for i, name in enumerate(facts.label_names)]
    elif facts.task_class in ("AlbertClassifier", "AlbertTokenClassifier") and not facts.regression:
        lines += ["", "No class names were recorded: outputs are class ids only."]
    return lines


def _where(facts):
    if not facts.handle:
        return "path/to/this/directory", None
    scheme, target = facts.handle.split("://", 1)
    if scheme == "kaggle":
        return facts.handle, f'import kagglehub\npath = kagglehub.model_download("{target}")'
    return facts.handle, f'import huggingface_hub\npath = huggingface_hub.snapshot_download("{target}")'


def _usage(facts):
    preset, download = _where(facts)
    cls = facts.task_class or "AlbertBackbone"
    code = ["import keras_albert  # registers the keras_albert classes (pip install keras-albert)", "",
            f'model = keras_albert.{cls}.from_preset("{preset}")']
    if facts.task_class == "AlbertClassifier" and not facts.regression:
        code.append('scores = model.predict(["A text to classify."])')
        if facts.label_names:
            code.append("model.label_names[scores.argmax(-1)[0]]")
    if facts.task_class == "AlbertTokenClassifier":
        code.append('ids = model.predict_word_labels([["Anne", "walked", "home"]])  # -1: truncated')
        if facts.label_names:
            code.append("[[model.label_names[i] if i >= 0 else None for i in row] for row in ids]")
    lines = ["## Usage", "", "```python"] + code + ["```"]
    if "serving/" in facts.files:
        inputs = {
            "AlbertQuestionAnswerer": 'question=tf.constant(["Who?"]), context=tf.constant(["Anne did."])',
            "AlbertMultipleChoice": ('context=tf.constant(["..."]), question=tf.constant(["..."]), '
                                     'choices=tf.constant([["a", "b"]])'),
        }.get(facts.task_class, 'text=tf.constant(["A text to classify."])')
        load = [download] if download else ['path = "path/to/this/directory"']
        lines += ["", "Serving without Keras, raw strings in:", "", "```python",
                  "import tensorflow as tf", "import tensorflow_text  # registers the SentencePiece op", ""]
        lines += load + [
            'serve = tf.saved_model.load(f"{path}/serving").signatures["serving_default"]',
            f"serve({inputs})", "```"]
    if "tfhub/" in facts.files:
        load = [download] if download else ['path = "path/to/this/directory"']
        lines += ["", "The TF-Hub modules (TF2 SavedModels; `hub.KerasLayer` takes them in tf-keras):", "",
                  "```python", "import tensorflow as tf",
                  "import tensorflow_text  # registers the SentencePiece op", ""] + load + [
            'preprocessor = tf.saved_model.load(f"{path}/tfhub/preprocessor")',
            'encoder = tf.saved_model.load(f"{path}/tfhub/encoder")',
            'encoder(preprocessor(tf.constant(["A sentence."])), False)["pooled_output"]', "```"]
    return lines


def _files(facts):
    lines = ["## Files", ""]
    for paths, what in facts.files.items():
        lines.append("- " + ", ".join(f"`{path}`" for path in paths.split(", ")) + f": {what}")
    lines += [f"- {sentence}" for sentence in facts.not_exported]
    return lines


def _provenance(facts):
    lines = ["## Training data and provenance", ""]
    if facts.training_data:
        lines += [facts.training_data, ""]
    sentences = [s for record in facts.records for s in describe_record(record)[0]]
    if not facts.training_data and not sentences:
        lines += ["Not recorded with this preset: the training data is unknown to this card.", ""]
    lines += [f"- {s}" for s in sentences]
    saved = facts.metadata
    lines.append(
        f"- Source preset: `{facts.source}`"
        + (f", saved {saved['date_saved']}" if saved.get("date_saved") else "")
        + (f" with Keras {saved['keras_version']}" if saved.get("keras_version") else "")
        + (f" and keras-hub {saved['keras_hub_version']}" if saved.get("keras_hub_version") else "")
        + "."
    )
    versions = facts.versions
    if versions:
        lines.append("- Published with " + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".")
    return lines


def _evaluation(facts):
    rows = [row for record in facts.records for row in describe_record(record)[1]]
    lines = ["## Evaluation", ""]
    if not rows:
        return lines + ["No evaluation is recorded with this preset; publishing measures none."]
    lines += ["Quoted from the records published with the model (not re-measured when publishing):", "",
              "| metric | value | measured on (record) |", "|---|---|---|"]
    return lines + [f"| {name} | {value} | {where} |" for name, value, where in rows]


def _framework(facts):
    return ["## Framework and backends", "",
            "Keras 3 with the **TensorFlow backend only**, through the `keras_albert` package (a "
            "keras-hub plugin: the preset follows keras-hub's file layout, its classes are "
            "`keras_albert`'s). The JAX and PyTorch backends are not supported and not tested: "
            "keras_albert tokenizes with TensorFlow ops (tensorflow-text) and exports TensorFlow "
            "SavedModels. Set `KERAS_BACKEND=tensorflow`."]


def _limitations(facts):
    items = []
    if facts.lowercase:
        items.append("The vocabulary is uncased: text is lowercased and accents are stripped.")
    config = facts.backbone_config
    if facts.sequence_length:
        items.append(f"Inputs longer than {facts.sequence_length} pieces are truncated (the "
                     f"preprocessor's length; the backbone has {config.get('max_sequence_length')} positions).")
    if any(r.kind == "finetuning" for r in facts.records):
        items.append("`finetune` keeps the epoch that scored best on the evaluation data it reports, "
                     "so those scores are optimistic; no separate test split is recorded.")
    if "tfhub/" in facts.files and facts.task_class not in (None, "AlbertPretrainer", "AlbertMaskedLM"):
        items.append("The TF-Hub modules hold the encoder only, not the task head.")
    items.append("Quality on text unlike the training data is not measured.")
    items += list(facts.limitations)
    return ["## Limitations", ""] + [f"- {item}" for item in items]


def _license(facts):
    return ["## Licence", "", f"{LICENSE_TITLES.get(facts.license, facts.license)} (`{facts.license}`), "
            "as chosen by the publisher. The training data's own terms (see Training data) also apply."]


def _citation(facts):
    config = facts.backbone_config
    keys = ["albert"]
    if config.get("bottleneck_dim") or config.get("embedding_type") == "trigram" or \
            config.get("normalization") == "no_norm":
        keys.append("mobilebert")
    if config.get("attention") == "lsh":
        keys.append("reformer")
    return ["## Citation", "", "```bibtex", "\n\n".join(CITATIONS[k] for k in keys), "```"]


def render_model_card(facts):
    """README.md text for `facts` (a `CardFacts`)."""
    sections = [
        [_front_matter(facts), "", f"# {facts.title}", "", facts.description],
        _architecture(facts), _task(facts), _usage(facts), _files(facts), _provenance(facts),
        _evaluation(facts), _framework(facts), _limitations(facts), _license(facts), _citation(facts),
    ]
    return "\n\n".join("\n".join(section) for section in sections) + "\n"
