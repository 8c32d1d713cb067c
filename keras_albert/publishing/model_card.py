"""The model card (README.md) of a published keras_albert model, built on
`huggingface_hub.ModelCard` / `ModelCardData`.

Metadata for the Hugging Face Hub and Kaggle (licence, language, pipeline
tag, `library_name` only where keras-hub's own classes hold the model,
`base_model`, `datasets`, and a `model-index` of the model's own results),
then: the model and its parameters, intended and out-of-scope uses, task
and labels, usage, files, training data with each source's licence, the
training settings the run recorded, the evaluation quoted from the records,
bias, risks and limitations as the run's records make them, the framework
statement (every Keras backend; exports need TensorFlow), licences and citations. Every number
comes from the preset, its records or the loaded model; nothing is
re-measured or invented here, and what no record holds is said to be
unrecorded.
"""

import dataclasses
import json

from huggingface_hub import EvalResult
from huggingface_hub import ModelCard
from huggingface_hub import ModelCardData

from keras_albert.publishing.preset_records import describe_record
from keras_albert.publishing.preset_records import recorded_hyperparameters
from keras_albert.publishing.preset_records import selection
from keras_albert.publishing.training_data_licences import uses_wordnet

PIPELINE_TAGS = {
    "AlbertClassifier": "text-classification",
    "AlbertTokenClassifier": "token-classification",
    "AlbertQuestionAnswerer": "question-answering",
    "AlbertMultipleChoice": "multiple-choice",
    "AlbertMaskedLM": "fill-mask",
    "AlbertPretrainer": "fill-mask",
    "AlbertCausalLM": "text-generation",
    None: "feature-extraction",
}
TASK_WORDS = {
    "AlbertClassifier": "text classification",
    "AlbertTokenClassifier": "token classification (a label per word)",
    "AlbertQuestionAnswerer": "extractive question answering (answer spans)",
    "AlbertMultipleChoice": "multiple choice (a score per choice)",
    "AlbertMaskedLM": "masked language modelling",
    "AlbertPretrainer": "pretraining heads (masked LM and sentence order)",
    "AlbertCausalLM": "causal language modelling: it continues a prompt (`generate`)",
    None: "an encoder (sequence and pooled outputs), no task head",
}
LANGUAGE_NAMES = {"en": "English"}
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
    # keras-hub's own ALBERT classes hold this architecture and task.
    keras_hub_loadable: bool = False
    base_model: str = None  # a Hugging Face Hub model id
    datasets: list = dataclasses.field(default_factory=list)  # Hub dataset ids
    # `training_data_licences.DataSource`s of the presets it descends from.
    data_sources: list = dataclasses.field(default_factory=list)
    weights_origin: str = None  # the licence of weights it started from


def pipeline_tag(facts):
    return PIPELINE_TAGS.get(facts.task_class, "feature-extraction")


def _results(facts):
    return [result for record in facts.records for result in describe_record(record)[1]]


def _bare(words):
    return words.replace("`", "")


def _metric_type(name):
    for prefix in ("validation_", "pretraining "):
        name = name.removeprefix(prefix)
    return name


def card_data(facts):
    """The card's metadata (`huggingface_hub.ModelCardData`)."""
    tags = ["keras", "keras_albert", "albert", "tensorflow", pipeline_tag(facts)]
    if facts.keras_hub_loadable:
        tags.insert(1, "keras-hub")
    eval_results = [
        EvalResult(
            task_type=result.task or pipeline_tag(facts), dataset_type=result.dataset,
            dataset_name=_bare(result.data), dataset_config=result.dataset_config,
            dataset_split=result.split, metric_type=_metric_type(result.metric),
            metric_name=result.metric, metric_value=result.value,
        )
        for result in _results(facts)
    ]
    return ModelCardData(
        library_name="keras-hub" if facts.keras_hub_loadable else None,
        license=facts.license, language=[facts.language] if facts.language else None,
        pipeline_tag=pipeline_tag(facts), tags=tags, base_model=facts.base_model,
        datasets=list(facts.datasets) or None, model_name=facts.title,
        eval_results=eval_results or None,
    )


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
    words = TASK_WORDS.get(facts.task_class, facts.task_class)
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
    if facts.task_class == "AlbertCausalLM":
        code += ['model.compile(sampler="top_p")  # or "greedy", "top_k", "random"',
                 'model.generate(["It was a fine morning and"], max_length=48)']
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
            "AlbertCausalLM": 'prompt=tf.constant(["It was a fine morning and"])',
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


def _task_data(facts):
    """The labelled data the task head learned from, in words, or None."""
    for record in facts.records:
        if record.kind == "finetuning" and (record.data.get("data") or {}).get("train"):
            return f"`{record.data['data']['train']}`"
        if record.kind == "student_report" and record.data.get("task"):
            return str(record.data["task"])
    return None


def _uses(facts):
    trained = _task_data(facts)
    like = f" like those it was trained on ({trained})" if trained else " like those it was trained on"
    language = f"{LANGUAGE_NAMES.get(facts.language, facts.language + '-language')} " if facts.language else ""
    names = facts.label_names or []
    shown = ", ".join(f"`{name}`" for name in names[:6]) + (", ..." if len(names) > 6 else "")
    task = facts.task_class
    if task == "AlbertClassifier" and facts.regression:
        use = f"Scoring {language}texts{like} on the scale of its training labels."
    elif task == "AlbertClassifier":
        classes = f"one of its {len(names)} classes ({shown})" if names else "a class id"
        use = f"Assigning {classes} to {language}texts{like}."
    elif task == "AlbertTokenClassifier":
        use = f"Labelling each word of {language}texts{like}."
    elif task == "AlbertQuestionAnswerer":
        use = f"Finding the answer span to a question in a given {language}context{like}."
    elif task == "AlbertMultipleChoice":
        use = f"Scoring given answers to a question about a {language}context{like}."
    elif task == "AlbertCausalLM":
        use = (f"Continuing {language}prompts in the style of its training text; a starting point to "
               "train further (`python -m keras_albert pretrain --objective=causal_lm --init_preset ...`).")
    else:
        use = (f"A starting point: fine-tune it on a labelled {language}task (`python -m keras_albert "
               "finetune`) or use its sequence and pooled outputs as features. It is not a classifier "
               "by itself.")
    intended = ["## Intended uses", "", use,
                "Meant for research, teaching and prototypes, read together with the evaluation and "
                "limitations below."]
    writes = ("Facts or advice: it continues text with what its training text made likely, true or not."
              if task == "AlbertCausalLM" else "Generating text: ALBERT is an encoder, it writes nothing.")
    out = [writes,
           f"Text unlike its training data (other {'languages, ' if facts.language else ''}domains, "
           "periods or registers) without first measuring it there.",
           "Decisions about people (hiring, credit, health, legal, moderation of individuals) "
           "without human review: no fairness or bias evaluation was run.",
           f"Uses that need the accuracy of a large model: this one has "
           f"{facts.backbone_parameters:,} backbone parameters."]
    if task not in (None, "AlbertMaskedLM", "AlbertPretrainer") and not facts.regression and names:
        out.append("Inputs that belong to none of its classes: it always picks one.")
    return intended + ["", "## Out-of-scope uses", ""] + [f"- {item}" for item in out]


def _training_data(facts):
    lines = ["## Training data", ""]
    if facts.training_data:
        lines += [facts.training_data, ""]
    sentences = [s for record in facts.records for s in describe_record(record)[0]]
    lines += [f"- {s}" for s in sentences]
    if facts.data_sources:
        lines += ["", "| data | used as | licence |", "|---|---|---|"]
        lines += [f"| {s.name} | {s.role} | {s.licence} |" for s in facts.data_sources]
    if not facts.training_data and not sentences and not facts.data_sources:
        lines.append("Not recorded with this preset: the training data is unknown to this card.")
    if any(r.kind == "finetuning" for r in facts.records) and not facts.training_data:
        lines += ["", "The fine-tuning data's own licence is not recorded; the publisher states it "
                  "(`publish --training_data`)."]
    saved = facts.metadata
    lines += ["", (
        f"Source preset: `{facts.source}`"
        + (f", saved {saved['date_saved']}" if saved.get("date_saved") else "")
        + (f" with Keras {saved['keras_version']}" if saved.get("keras_version") else "")
        + (f" and keras-hub {saved['keras_hub_version']}" if saved.get("keras_hub_version") else "")
        + "."
    )]
    if facts.versions:
        lines.append("Published with " + ", ".join(f"{k} {v}" for k, v in facts.versions.items()) + ".")
    return lines


def _hyperparameters(facts):
    rows = recorded_hyperparameters(facts.records)
    lines = ["## Training settings", ""]
    if not rows:
        return lines + ["No training settings are recorded with this preset."]
    lines += ["As the run recorded them (settings no record holds are not listed):", "",
              "| setting | value | record |", "|---|---|---|"]
    return lines + [f"| {name} | {value} | `{where}` |" for name, value, where in rows]


def _evaluation(facts):
    results = _results(facts)
    lines = ["## Evaluation", ""]
    if not results:
        return lines + ["No evaluation of this model is recorded with this preset; publishing measures none."]
    lines += ["This model's own results, quoted from the records published with it (not re-measured "
              "when publishing):", "", "| metric | value | data | split | examples | record |",
              "|---|---|---|---|---|---|"]
    lines += [f"| {r.metric} | {r.value:.4f} | {r.data} | {r.split} | "
              f"{'' if r.examples is None else f'{r.examples:,}'} | `{r.record}` |" for r in results]
    return lines


def _selection_limitations(facts):
    items = []
    for record in facts.records:
        if record.kind != "finetuning":
            continue
        data, run = record.data, record.data.get("data") or {}
        chosen = selection(data)
        if chosen == "validation":
            items.append(f"`finetune` chose the epoch it kept by {data['selection_metric']} on "
                         f"{data['selection_data']}; the evaluation data's scores were reported, not "
                         "used to choose.")
        elif chosen == "last":
            items.append("No validation split was held out: `finetune` kept the last epoch without "
                         "choosing, and scored the evaluation data each epoch.")
        else:
            items.append("`finetune` kept the epoch that scored best on the evaluation data it reports, "
                         "so those scores are optimistic; no separate test split is recorded.")
        if run.get("train") and run.get("train") == run.get("eval"):
            items.append(f"It was evaluated on its own training file (`{run['train']}`): the evaluation "
                         "figures measure how well it fits that file, not how it does on new text.")
    for result in _results(facts):
        # On a small set one example moves a rate by a visible step.
        if result.examples and result.examples < 1000 and result.metric.endswith("accuracy"):
            items.append(f"{result.metric} {result.value:.4f} was measured on {result.examples:,} "
                         f"examples only: each one moves it by {100 / result.examples:.1f} points.")
    return items


def _risks(facts):
    items = []
    names = {source.name for source in facts.data_sources}
    old_texts = [words for part, words in (("Austen", "early 19th-century novels"),
                                           ("King James", "a 1611 Bible translation"),
                                           ("1913", "a 1913 dictionary")) if any(part in n for n in names)]
    if old_texts:
        listed = ", ".join(old_texts[:-1]) + (" and " if len(old_texts) > 1 else "") + old_texts[-1]
        items.append(f"Much of the text it learned from is {listed}: it learned their vocabulary and "
                     "their views of gender, class, religion and people.")
    if uses_wordnet(facts.data_sources):
        items.append("WordNet's glosses and categories are its lexicographers' choices, in the American "
                     "English of their time.")
    if any("Wikipedia" in name for name in names):
        items.append("BookCorpus and Wikipedia carry the biases of their writers.")
    if any(r.kind == "finetuning" for r in facts.records):
        items.append("It learned whatever associations its fine-tuning data holds; that data's biases are "
                     "unknown to this card.")
    items.append("No bias or fairness evaluation was run on it.")
    items += _selection_limitations(facts)
    if facts.lowercase:
        items.append("The vocabulary is uncased: text is lowercased and accents are stripped.")
    if facts.sequence_length:
        items.append(f"Inputs longer than {facts.sequence_length} pieces are truncated (the "
                     f"preprocessor's length; the backbone has "
                     f"{facts.backbone_config.get('max_sequence_length')} positions).")
    if "tfhub/" in facts.files and facts.task_class not in (None, "AlbertPretrainer", "AlbertMaskedLM"):
        items.append("The TF-Hub modules hold the encoder only, not the task head.")
    items.append("Quality on text unlike the training data is not measured.")
    items += list(facts.limitations)
    return ["## Bias, risks and limitations", ""] + [f"- {item}" for item in items]


def _framework(facts):
    lines = ["## Framework and backends", "",
             "Keras 3 through the `keras_albert` package (a keras-hub plugin: the preset follows "
             "keras-hub's file layout, its classes are `keras_albert`'s), on **every Keras backend**: "
             "TensorFlow (the default), JAX and PyTorch (`KERAS_BACKEND=jax` or `torch`, with no "
             "TensorFlow needed; keras_albert's tests hold every model's outputs there to "
             "TensorFlow's within 1e-5). Exports (serving SavedModels, TF-Hub modules, TFLite) are "
             "TensorFlow's and need it."]
    if facts.keras_hub_loadable:
        lines += ["", "keras-hub's own ALBERT classes hold this architecture: `python -m keras_albert "
                  "convert --from=keras_albert --to=keras_hub` writes a preset keras-hub loads without "
                  "keras_albert."]
    else:
        lines += ["", "keras-hub's own classes cannot hold this model (its architecture or task is "
                  "keras_albert's alone), so the card names no keras-hub library: load it with "
                  "keras_albert."]
    return lines


def _license(facts):
    title = LICENSE_TITLES.get(facts.license, facts.license)
    lines = ["## Licence", "", f"Weights and files: {title} (`{facts.license}`), as chosen by the publisher."]
    if facts.weights_origin:
        lines.append(f"It was made from {facts.weights_origin}.")
    if facts.data_sources:
        lines.append("The training data's licences are listed under Training data; "
                     + ("WordNet's licence travels with it in `WORDNET_LICENSE`. "
                        if uses_wordnet(facts.data_sources) else "")
                     + "Their terms apply to the data, not only to this card.")
    else:
        lines.append("The training data's own terms (see Training data) also apply.")
    return lines


def _citation(facts):
    config = facts.backbone_config
    keys = ["albert"]
    if config.get("bottleneck_dim") or config.get("embedding_type") == "trigram" or \
            config.get("normalization") == "no_norm":
        keys.append("mobilebert")
    if config.get("attention") == "lsh":
        keys.append("reformer")
    return ["## Citation", "", "```bibtex", "\n\n".join(CITATIONS[k] for k in keys), "```"]


def build_model_card(facts):
    """The card for `facts` (a `CardFacts`) as a `huggingface_hub.ModelCard`."""
    sections = [
        [f"# {facts.title}", "", facts.description],
        _architecture(facts), _uses(facts), _task(facts), _usage(facts), _files(facts),
        _training_data(facts), _hyperparameters(facts), _evaluation(facts), _risks(facts),
        _framework(facts), _license(facts), _citation(facts),
    ]
    body = "\n\n".join("\n".join(section) for section in sections)
    return ModelCard(f"---\n{card_data(facts).to_yaml()}\n---\n\n{body}\n")


def render_model_card(facts):
    """README.md text for `facts` (a `CardFacts`)."""
    return str(build_model_card(facts))
