"""Classify texts with a fine-tuned classifier: a preset or a serving SavedModel.

`predict_texts(PredictSettings(...))` is what `python -m keras_albert
predict` runs: it reads the texts (one a line, or the columns of a table),
runs them in batches, each padded only to its length bucket, and writes
one row per text: the predicted label by name, its probability and every
class's probability (a regressor's row: its score), as JSON lines or TSV. A preset runs on every Keras
backend; a SavedModel (TensorFlow only) buckets inside its graph, and its
batches are formed from texts of similar length. Long inputs log their
progress in texts, with the time left.
"""

import logging
import os
import pathlib
import sys

import keras
import numpy as np

from keras_albert.data.task_files import read_text_examples
from keras_albert.models.albert_classifier import AlbertClassifier
from keras_albert.models.albert_multiple_choice import AlbertMultipleChoice
from keras_albert.models.albert_question_answerer import AlbertQuestionAnswerer
from keras_albert.models.albert_text_classifier_preprocessor import (
    AlbertTextClassifierPreprocessor,
)
from keras_albert.models.albert_token_classifier import AlbertTokenClassifier
from keras_albert.models.length_buckets import CHUNK_BATCHES
from keras_albert.pipelines.choice_predictions import PresetChooser
from keras_albert.pipelines.choice_predictions import choice_rows
from keras_albert.pipelines.choice_predictions import format_choice_rows
from keras_albert.pipelines.choice_predictions import read_questions
from keras_albert.pipelines.prediction_settings import STDIN
from keras_albert.pipelines.prediction_settings import STDOUT
from keras_albert.pipelines.prediction_settings import TABLE_SUFFIXES
from keras_albert.pipelines.prediction_settings import answers_questions
from keras_albert.pipelines.prediction_settings import check_predict_settings
from keras_albert.pipelines.prediction_settings import chooses_options
from keras_albert.pipelines.prediction_settings import output_format
from keras_albert.pipelines.question_answering_predictions import QUESTION_COLUMNS
from keras_albert.pipelines.question_answering_predictions import PresetAnswerer
from keras_albert.pipelines.question_answering_predictions import format_answer_rows
from keras_albert.pipelines.task_preset_loading import load_task_preset
from keras_albert.pipelines.word_tagging import PresetTagger
from keras_albert.pipelines.word_tagging import format_tagged_rows
from keras_albert.presets.preset_kind import task_class_name
from keras_albert.presets.preset_resolution import resolve_preset
from keras_albert.utils.atomic_file import write_file_atomically
from keras_albert.utils.label_file import read_label_file
from keras_albert.utils.progress import logged_chunks
from keras_albert.utils.progress import logged_step
from keras_albert.utils.row_output import rows_as_text
from keras_albert.utils.text_lines import text_lines

_logger = logging.getLogger(__name__)


def read_texts(path, text_columns=("text",)):
    """(texts, second texts or None) from `path`: the columns of a
    .tsv/.csv/.jsonl table, else one text a line ("-": standard input);
    blank lines are skipped, a BOM dropped."""
    if path != STDIN and pathlib.Path(path).suffix.lower() in TABLE_SUFFIXES:
        examples = read_text_examples(path, text_columns=tuple(text_columns), label_column=None)
        return examples.texts, examples.text_pairs
    data = sys.stdin.buffer.read() if path == STDIN else pathlib.Path(path).read_bytes()
    where = "standard input" if path == STDIN else repr(path)
    texts = text_lines(data, "--texts", where)
    return texts, None


def _softmax(logits):
    shifted = np.exp(logits - logits.max(-1, keepdims=True))
    return shifted / shifted.sum(-1, keepdims=True)


class PresetClassifier:
    """A text classifier (or regressor) preset on any backend; `outputs(
    texts, pairs, batch_size)` runs `AlbertClassifier.predict`
    (length-bucketed): class probabilities, or a regressor's scores."""

    takes_pairs = None  # a preset does not record whether it was trained on pairs

    def __init__(self, preset, sequence_length=None, directory=None):
        directory = directory or preset_task(preset)[0]
        self.source = f"preset {preset!r}"
        self.model = load_task_preset(
            AlbertClassifier, AlbertTextClassifierPreprocessor, preset, directory, sequence_length)
        activation = keras.activations.serialize(self.model.activation)
        activation = activation if isinstance(activation, str) else activation.get("config", activation)
        if activation not in ("linear", "softmax"):
            raise ValueError(
                f"`--preset` {preset!r} outputs {activation!r} activations; predict reads logits "
                "(activation=None) or softmax probabilities.")
        self.num_classes = self.model.num_classes
        self.regression = self.num_classes == 1
        self._softmax = activation == "linear" and not self.regression
        names = self.model.label_names
        self.label_names = list(names) if names else [str(i) for i in range(self.model.num_classes)]

    def outputs(self, texts, pairs, batch_size):
        x = list(texts) if pairs is None else (list(texts), list(pairs))
        outputs = np.asarray(self.model.predict(x, batch_size=batch_size, verbose=0), "float64")
        return _softmax(outputs) if self._softmax else outputs


class SavedModelClassifier:
    """A serving SavedModel (TensorFlow only) whose `serving_default` takes
    `text` (and `text_pair`) and returns `probabilities` (a classifier) or
    one `logits` column (a regressor's score). Class names come from its
    labels.txt, else from its `labels` output (the predicted class's name);
    class ids otherwise."""

    def __init__(self, directory):
        import tensorflow as tf
        import tensorflow_text  # noqa: F401 (registers the SentencePiece op)

        from keras_albert.utils.native_notices import SAVED_MODEL_NOTICES
        from keras_albert.utils.native_notices import notices_held_back

        self._tf = tf
        self.source = f"SavedModel {str(directory)!r}"
        with logged_step(_logger, f"Loading {self.source}"), notices_held_back(SAVED_MODEL_NOTICES):
            loaded = tf.saved_model.load(str(directory))
        self._loaded = loaded  # keeps the signature's variables alive
        serve = loaded.signatures.get("serving_default")
        inputs = set(serve.structured_input_signature[1]) if serve is not None else set()
        outputs = set(serve.structured_outputs) if serve is not None else set()
        self.regression = "probabilities" not in outputs and "logits" in outputs and (
            serve.structured_outputs["logits"].shape[-1] == 1)
        if "text" not in inputs or not ("probabilities" in outputs or self.regression):
            raise ValueError(
                f"`--saved_model` {str(directory)!r} is not a text classifier's serving SavedModel: its "
                f"serving_default takes {sorted(inputs)} and returns {sorted(outputs)}; predict needs "
                "`text` in and `probabilities` (or a regressor's one `logits` column) out, what "
                "`finetune --task=classification` or `--task=regression` exports."
            )
        self._serve = serve
        self._output = "logits" if self.regression else "probabilities"
        self._served_labels = "labels" in outputs
        self.takes_pairs = "text_pair" in inputs
        self.num_classes = int(serve.structured_outputs[self._output].shape[-1])
        names = read_label_file(directory)
        if names is not None and len(names) != self.num_classes:
            raise ValueError(
                f"`--saved_model` {str(directory)!r}: labels.txt names {len(names)} classes, the model "
                f"predicts {self.num_classes}.")
        self.label_names = names
        self._seen = {}  # class id -> the name the model served for it

    def _run(self, texts, pairs):
        tf = self._tf
        inputs = {"text": tf.constant(texts)}
        if pairs is not None:
            inputs["text_pair"] = tf.constant(pairs)
        served = self._serve(**inputs)
        probabilities = served[self._output].numpy().astype("float64")
        if self._served_labels and self.label_names is None:
            for class_id, name in zip(probabilities.argmax(-1), served["labels"].numpy()):
                self._seen[int(class_id)] = name.decode("utf-8")
        return probabilities

    def outputs(self, texts, pairs, batch_size):
        # Batches of texts of similar length: the graph pads each batch to
        # its longest text's bucket.
        order = np.argsort([len(t) + (len(pairs[i]) if pairs is not None else 0) for i, t in enumerate(texts)],
                           kind="stable")
        result = np.zeros([len(texts), self.num_classes])
        for start in range(0, len(order), batch_size):
            rows = order[start:start + batch_size]
            result[rows] = self._run([texts[i] for i in rows], None if pairs is None else [pairs[i] for i in rows])
        return result

    def predicted_name(self, class_id):
        """The name of a predicted class without labels.txt: as served, or the id."""
        return self._seen.get(int(class_id), str(int(class_id)))


def preset_task(preset):
    """`(directory, task class name)` of a preset that `predict` and
    `evaluate` take (a text or token classifier); others are refused,
    naming what is taken."""
    directory = pathlib.Path(resolve_preset(preset))
    try:
        name = task_class_name(directory)
    except ValueError as error:
        raise ValueError(f"`--preset` {preset!r}: {error}") from None
    if name is None:
        raise ValueError(
            f"`--preset` {preset!r} holds no fine-tuned task (no task.json), so it has no classes "
            "to predict: pass a text classifier, e.g. the preset/ that `finetune "
            "--task=classification` writes."
        )
    taken = (AlbertClassifier, AlbertTokenClassifier, AlbertQuestionAnswerer, AlbertMultipleChoice)
    if name not in [task.__name__ for task in taken]:
        raise ValueError(
            f"`--preset` {preset!r} holds {name} (its task.json); predict and evaluate take the task presets "
            f"`finetune` writes: text classifiers ({AlbertClassifier.__name__}, `--task=classification` or "
            f"`--task=regression`), token classifiers ({AlbertTokenClassifier.__name__}, "
            f"`--task=token_classification`), question answerers ({AlbertQuestionAnswerer.__name__}, "
            f"`--task=squad`) and multiple choice ({AlbertMultipleChoice.__name__}, `--task=multiple_choice`)."
        )
    return directory, name


def load_classifier(preset=None, saved_model=None, sequence_length=None):
    """A `PresetClassifier`, a `PresetTagger` (a token classifier preset)
    or a `SavedModelClassifier` (exactly one of `preset` and
    `saved_model`)."""
    if saved_model:
        if sequence_length is not None:
            raise ValueError(
                "`--sequence_length` applies to `--preset`; a SavedModel keeps the length it was exported with.")
        return SavedModelClassifier(saved_model)
    directory, name = preset_task(preset)
    if name == AlbertTokenClassifier.__name__:
        return PresetTagger(preset, directory, sequence_length)
    if name == AlbertQuestionAnswerer.__name__:
        return PresetAnswerer(preset, directory, sequence_length)
    if name == AlbertMultipleChoice.__name__:
        return PresetChooser(preset, directory, sequence_length)
    return PresetClassifier(preset, sequence_length, directory)


def _check_pairs(classifier, pairs):
    if classifier.takes_pairs is None:
        return
    if classifier.takes_pairs and pairs is None:
        raise ValueError(
            f"The {classifier.source} classifies text pairs (`text`, `text_pair`): pass a table "
            "and two `--text_columns`.")
    if not classifier.takes_pairs and pairs is not None:
        raise ValueError(
            f"The {classifier.source} classifies single texts; received two `--text_columns`.")


def classify(classifier, texts, pairs=None, batch_size=32):
    """Class probabilities [len(texts), classes] (a regressor's scores
    [len(texts), 1]) in the texts' order, run in chunks; inputs longer than
    one chunk log their progress in texts."""
    _check_pairs(classifier, pairs)
    count, chunk = len(texts), batch_size * CHUNK_BATCHES
    parts = []
    _logger.info("Classifying %s text%s in batches of %d with the %s", f"{count:,}", "" if count == 1 else "s",
                 batch_size, classifier.source)
    for start, stop in logged_chunks(_logger, count, chunk, "Texts classified"):
        parts.append(classifier.outputs(
            texts[start:stop], None if pairs is None else pairs[start:stop], batch_size))
    return np.concatenate(parts)


def predicted_names(classifier, probabilities):
    """The name of each row's most probable class."""
    ids = probabilities.argmax(-1)
    if classifier.label_names is not None:
        return [classifier.label_names[i] for i in ids]
    return [classifier.predicted_name(i) for i in ids]


def prediction_rows(classifier, texts, pairs, probabilities):
    """One dict per text: text (text_pair), label, probability, and
    probabilities by class name (class id where names are unknown); for a
    regressor, text (text_pair) and score."""
    if classifier.regression:
        return [{"text": text, **({"text_pair": pairs[index]} if pairs is not None else {}),
                 "score": round(float(row[0]), 6)} for index, (text, row) in enumerate(zip(texts, probabilities))]
    labels = predicted_names(classifier, probabilities)
    columns = classifier.label_names or [str(i) for i in range(probabilities.shape[1])]
    rows = []
    for index, (text, label, row) in enumerate(zip(texts, labels, probabilities)):
        record = {"text": text}
        if pairs is not None:
            record["text_pair"] = pairs[index]
        record.update({
            "label": label,
            "probability": round(float(row.max()), 6),
            "probabilities": {name: round(float(p), 6) for name, p in zip(columns, row)},
        })
        rows.append(record)
    return rows


def format_rows(rows, output_format):
    """The rows as JSON lines, or as TSV with a header (text, [text_pair,]
    label, probability, then one `p(NAME)` column per class; a regressor's:
    text, [text_pair,] score)."""
    fixed = [key for key in rows[0] if key != "probabilities"]
    classes = list(rows[0].get("probabilities", ()))
    return rows_as_text(rows, output_format, fixed + [f"p({name})" for name in classes],
                        lambda row: [row[key] for key in fixed] + list(row.get("probabilities", {}).values()))


def write_output(text, output):
    """`text` to the file `output` (whole or not at all) or standard output."""
    if output == STDOUT:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            # The reader stopped early (`predict ... | head`): it read what it
            # wanted. Python's exit flush would fail again on the closed pipe.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return
    write_file_atomically(output, text, name="--output")
    _logger.info("Wrote %s", output)


def predict_texts(settings):
    """Classifies `settings.texts`; writes the rows to `settings.output`
    and returns them (see `prediction_rows`)."""
    check_predict_settings(settings)
    if chooses_options(settings.preset):
        # RACE records, read (and refused) before the model loads.
        questions = read_questions(settings.texts, "--texts", labelled=False)
        chooser = load_classifier(settings.preset, settings.saved_model, settings.sequence_length)
        rows = choice_rows(questions, chooser.probabilities(questions, settings.batch_size))
        write_output(format_choice_rows(rows, output_format(settings)), settings.output)
        return rows
    columns = tuple(settings.text_columns)
    if answers_questions(settings.preset) and columns == ("text",):
        columns = QUESTION_COLUMNS
    texts, pairs = read_texts(settings.texts, columns)
    classifier = load_classifier(settings.preset, settings.saved_model, settings.sequence_length)
    if isinstance(classifier, PresetAnswerer):
        if pairs is None:
            raise ValueError(f"The {classifier.source} answers a question from its context: pass two "
                             "`--text_columns` (question, then context).")
        rows = classifier.rows(texts, pairs, settings.batch_size, settings.allow_no_answer)
        write_output(format_answer_rows(rows, output_format(settings)), settings.output)
        return rows
    if isinstance(classifier, PresetTagger):
        if pairs is not None:
            raise ValueError(f"The {classifier.source} tags the words of single texts; received two "
                             "`--text_columns`.")
        rows = classifier.rows(texts, settings.batch_size)
        write_output(format_tagged_rows(rows, output_format(settings)), settings.output)
        return rows
    probabilities = classify(classifier, texts, pairs, settings.batch_size)
    rows = prediction_rows(classifier, texts, pairs, probabilities)
    write_output(format_rows(rows, output_format(settings)), settings.output)
    return rows
