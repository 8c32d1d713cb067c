"""Score a fine-tuned classifier on a labelled table.

`evaluate_classifier(EvaluateSettings(...))` is what `python -m
keras_albert evaluate` runs: it classifies the table's texts as `predict`
does (`predicting.classify`), then reports the classification task's
metrics as `finetune` computes them (accuracy and macro F1, from
`keras_albert.data.task_metrics`), per-class precision, recall, F1 and
support, and the confusion matrix (rows: true labels, columns: predicted),
as JSON. A regressor is scored as `finetune --task=regression` scores it
(Pearson and Spearman correlation), with the mean squared error; a token
classifier on a CoNLL file as `finetune --task=token_classification`
scores it (word accuracy, macro F1, and entity F1 for chunk tags); a
question answerer on a SQuAD JSON file by F1 and exact match; a
multiple-choice model on RACE files by accuracy.
"""

import json

import numpy as np

from keras_albert.data import task_metrics
from keras_albert.data.task_files import TaskFileError
from keras_albert.data.task_files import read_conll
from keras_albert.data.task_files import read_squad
from keras_albert.data.task_files import read_text_examples
from keras_albert.pipelines.choice_predictions import PresetChooser
from keras_albert.pipelines.choice_predictions import read_questions
from keras_albert.pipelines.predicting import classify
from keras_albert.pipelines.predicting import load_classifier
from keras_albert.pipelines.predicting import write_output
from keras_albert.pipelines.prediction_settings import check_evaluate_settings
from keras_albert.pipelines.question_answering_predictions import PresetAnswerer
from keras_albert.pipelines.question_answering_predictions import squad_scores_of
from keras_albert.pipelines.word_tagging import PresetTagger

# What `finetune --task=classification` (and `--task=regression`) scores
# every epoch with.
CLASSIFICATION_METRICS = ("accuracy", "f1_macro")
REGRESSION_METRICS = ("pearson", "spearman")


def confusion_matrix(true_ids, predicted_ids, num_classes):
    """counts[i][j]: examples of class i predicted as class j."""
    counts = np.zeros([num_classes, num_classes], "int64")
    np.add.at(counts, (np.asarray(true_ids), np.asarray(predicted_ids)), 1)
    return counts


def per_class_scores(counts, names):
    """{name: precision, recall, f1, support} from a confusion matrix."""
    scores = {}
    for index, name in enumerate(names):
        hits = int(counts[index, index])
        predicted, support = int(counts[:, index].sum()), int(counts[index].sum())
        precision = hits / predicted if predicted else 0.0
        recall = hits / support if support else 0.0
        f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
        scores[name] = {"precision": precision, "recall": recall, "f1": f1, "support": support}
    return scores


def _true_ids(classifier, labels, settings):
    names = classifier.label_names
    if names is None:
        # A SavedModel without labels.txt: the table must hold class ids.
        names = [str(i) for i in range(classifier.num_classes)]
    index = {name: i for i, name in enumerate(names)}
    unknown = sorted({label for label in labels} - set(index))
    if unknown:
        raise ValueError(
            f"`--data` {settings.data!r} column {settings.label_column!r} holds labels the classifier "
            f"does not know: {unknown[:5]!r}{' ...' if len(unknown) > 5 else ''}; its classes: {names!r}."
        )
    return names, np.asarray([index[label] for label in labels])


def _scores(labels, settings):
    """A regressor's labels as numbers, the first that is not one named."""
    values = []
    for label in labels:
        try:
            values.append(float(label))
        except ValueError:
            raise ValueError(
                f"`--data` {settings.data!r} column {settings.label_column!r} holds {label!r}: the "
                "classifier is a regressor, whose labels are numbers."
            ) from None
    return np.asarray(values)


def _regression_report(settings, classifier, examples):
    scores = _scores(examples.labels, settings)
    predicted = classify(classifier, examples.texts, examples.text_pairs, settings.batch_size)[:, 0]
    metrics = {name: task_metrics.METRICS[name](predicted, scores) for name in REGRESSION_METRICS}
    metrics["mean_squared_error"] = float(np.mean((predicted - scores) ** 2))
    return {"model": settings.preset or settings.saved_model, "data": settings.data,
            "examples": len(scores), "metrics": metrics}


def _tagging_report(settings, tagger):
    """A token classifier on a CoNLL file: word accuracy and macro F1 as
    `finetune` scores them (a word the length cut counts as wrong), entity
    F1 for chunk tags, and per-tag scores with the confusion matrix."""
    names = tagger.label_names
    try:
        sentences, labels, _ = read_conll(settings.data, label_set=names)
    except TaskFileError as error:
        raise ValueError(f"`--data` {settings.data!r} is not CoNLL columns for this tagger: {error}") from None
    predicted = tagger.model.predict_word_labels(sentences, batch_size=settings.batch_size)
    index = {name: i for i, name in enumerate(names)}
    label_ids = [[index[tag] for tag in row] for row in labels]
    entity = ("entity_f1",) if task_metrics.is_entity_scheme(names) else ()
    metrics = task_metrics.word_label_scores(predicted, label_ids, names, entity + CLASSIFICATION_METRICS)
    true_ids = np.concatenate(label_ids)
    predicted_ids = np.concatenate([np.asarray(row) for row in predicted])
    kept = predicted_ids >= 0
    counts = confusion_matrix(true_ids[kept], predicted_ids[kept], len(names))
    return {
        "model": settings.preset, "data": settings.data, "sentences": len(sentences),
        "words": len(true_ids), "words_cut_by_length": int((~kept).sum()), "metrics": metrics,
        "per_class": per_class_scores(counts, names),
        "confusion_matrix": {"labels": names, "rows": "true label", "columns": "predicted label",
                             "counts": counts.tolist(), "of": "words the length kept"},
    }


def _answering_report(settings, answerer):
    """A question answerer on a SQuAD JSON file: F1 and exact match as
    `finetune` scores them (no-answer allowed when the file has unanswerable
    questions, SQuAD v2)."""
    try:
        examples = read_squad(settings.data)
    except TaskFileError as error:
        raise ValueError(f"`--data` {settings.data!r} is not a SQuAD file for this question answerer: {error}") \
            from None
    allow_no_answer = any(e.is_impossible for e in examples)
    return {
        "model": settings.preset, "data": settings.data, "questions": len(examples),
        "allow_no_answer": allow_no_answer,
        "metrics": squad_scores_of(answerer.model, examples, allow_no_answer, settings.batch_size),
    }


def _choice_report(settings, chooser):
    """A multiple-choice model on RACE files: accuracy, as `finetune`
    scores it."""
    examples = read_questions(settings.data, "--data", labelled=True)
    predicted = chooser.probabilities(examples, settings.batch_size).argmax(-1)
    labels = np.asarray([e.label for e in examples])
    return {"model": settings.preset, "data": settings.data, "questions": len(examples),
            "metrics": {"accuracy": task_metrics.accuracy(predicted, labels)}}


def evaluate_classifier(settings):
    """Scores the classifier (or regressor, token classifier or question
    answerer) on `settings.data`; writes the report (JSON) to
    `settings.output` and returns it."""
    check_evaluate_settings(settings)
    classifier = load_classifier(settings.preset, settings.saved_model, settings.sequence_length)
    reports = {PresetTagger: _tagging_report, PresetAnswerer: _answering_report, PresetChooser: _choice_report}
    if type(classifier) in reports:
        report = reports[type(classifier)](settings, classifier)
        write_output(report_json(report), settings.output)
        return report
    examples = read_text_examples(
        settings.data, text_columns=tuple(settings.text_columns), label_column=settings.label_column)
    if classifier.regression:
        report = _regression_report(settings, classifier, examples)
        write_output(report_json(report), settings.output)
        return report
    names, true_ids = _true_ids(classifier, examples.labels, settings)
    probabilities = classify(classifier, examples.texts, examples.text_pairs, settings.batch_size)
    predicted_ids = probabilities.argmax(-1)
    counts = confusion_matrix(true_ids, predicted_ids, len(names))
    report = {
        "model": settings.preset or settings.saved_model,
        "data": settings.data,
        "examples": len(true_ids),
        "metrics": {name: task_metrics.METRICS[name](predicted_ids, true_ids) for name in CLASSIFICATION_METRICS},
        "per_class": per_class_scores(counts, names),
        "confusion_matrix": {"labels": names, "rows": "true label", "columns": "predicted label",
                             "counts": counts.tolist()},
    }
    write_output(report_json(report), settings.output)
    return report


def report_json(report):
    """The report as indented JSON, each class's scores and each row of the
    confusion matrix on one line (26 classes stay readable)."""
    if "confusion_matrix" not in report:  # a regressor's
        return json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    compact = {}

    def one_line(value):
        # A control character: no class name holds one (labels.txt refuses them).
        key = f"\x00{len(compact)}"
        compact[json.dumps(key)] = json.dumps(value, ensure_ascii=False)
        return key

    shown = dict(report, per_class={name: one_line(scores) for name, scores in report["per_class"].items()})
    matrix = report["confusion_matrix"]
    shown["confusion_matrix"] = dict(matrix, counts=[one_line(row) for row in matrix["counts"]])
    text = json.dumps(shown, indent=2, ensure_ascii=False)
    for key, value in compact.items():
        text = text.replace(key, value, 1)
    return text + "\n"
