"""What `finetune` does differently per task: read, build, feed, score.

Each task is a small class with the same four methods (`read`, `build`,
`fit_arguments`, `score`) and a `metrics` tuple whose first entry selects
the best epoch, so the command's loop is written once.
"""

import numpy as np

from keras_albert.data import task_metrics
from keras_albert.data.bucketed_batches import bucketed_dataset
from keras_albert.data.glue_tasks import glue_task
from keras_albert.data.glue_tasks import read_glue
from keras_albert.data.task_files import read_conll
from keras_albert.data.task_files import read_race
from keras_albert.data.task_files import read_squad
from keras_albert.data.task_files import read_text_examples
from keras_albert.data.tfds_examples import read_tfds
from keras_albert.models.albert_classifier import AlbertClassifier
from keras_albert.models.albert_multiple_choice import AlbertMultipleChoice
from keras_albert.models.albert_multiple_choice_preprocessor import (
    AlbertMultipleChoicePreprocessor,
)
from keras_albert.models.albert_question_answerer import AlbertQuestionAnswerer
from keras_albert.models.albert_question_answerer_preprocessor import (
    AlbertQuestionAnswererPreprocessor,
)
from keras_albert.models.albert_text_classifier_preprocessor import (
    AlbertTextClassifierPreprocessor,
)
from keras_albert.models.albert_token_classifier import AlbertTokenClassifier
from keras_albert.models.albert_token_classifier_preprocessor import (
    AlbertTokenClassifierPreprocessor,
)


class TextTask:
    """Classification (labels from the training file) or regression."""

    serving = True

    def __init__(self, args, regression=False):
        self.args, self.regression = args, regression
        self.label_set = None
        self.glue = glue_task(args.glue_task) if args.glue_task else None
        self.metrics = (
            self.glue.metrics if self.glue
            else ("pearson", "spearman") if regression else ("accuracy", "f1_macro")
        )

    def read(self, path, split):
        if self.glue:
            examples = read_glue(self.args.glue_task, path, "train" if split == "train" else "dev")
        elif self.args.tfds:
            # --train / --eval name the splits of the local TFDS copy.
            examples = read_tfds(
                self.args.tfds, str(path), tuple(self.args.text_columns),
                self.args.label_column, data_dir=self.args.tfds_data_dir,
            )
        else:
            examples = read_text_examples(
                path,
                text_columns=tuple(self.args.text_columns),
                label_column=self.args.label_column,
                label_set=self.label_set,
                regression=self.regression,
            )
        if split == "train" and not self.regression:
            self.label_set = examples.label_set
        x = examples.texts if examples.text_pairs is None else (examples.texts, examples.text_pairs)
        if self.regression:
            y = np.asarray(examples.labels, "float32")
        else:
            index = {label: i for i, label in enumerate(self.label_set)}
            y = np.asarray([index[label] for label in examples.labels], "int32")
        return x, y

    def build(self, preset):
        preprocessor = AlbertTextClassifierPreprocessor.from_preset(
            preset, sequence_length=self.args.sequence_length
        )
        num_classes = 1 if self.regression else len(self.label_set)
        return AlbertClassifier.from_preset(preset, num_classes=num_classes, preprocessor=preprocessor)

    def fit_arguments(self, model, data):
        # Batches padded to their length bucket (shuffled every epoch).
        x, y = data
        return {"x": bucketed_dataset(model.preprocessor, x, y, batch_size=self.args.batch_size, seed=self.args.seed)}

    def check_texts(self, data):
        x = data[0]
        return list((x[0] if isinstance(x, tuple) else x)[:16])

    def score(self, model, data):
        x, y = data
        outputs = model.predict(x, batch_size=self.args.batch_size, verbose=0)
        predictions = outputs[:, 0] if self.regression else outputs.argmax(-1)
        return {name: task_metrics.METRICS[name](predictions, y) for name in self.metrics}


class SquadTask:
    serving = True
    metrics = ("f1", "exact_match")

    def __init__(self, args):
        self.args = args
        self.allow_no_answer = False

    def read(self, path, split):
        examples = read_squad(path)
        if split == "train":
            self.allow_no_answer = any(e.is_impossible for e in examples)
        return examples

    def build(self, preset):
        preprocessor = AlbertQuestionAnswererPreprocessor.from_preset(
            preset, sequence_length=self.args.sequence_length, doc_stride=self.args.doc_stride
        )
        return AlbertQuestionAnswerer.from_preset(preset, preprocessor=preprocessor)

    def fit_arguments(self, model, examples):
        windows = model.preprocessor.windows(
            [e.question for e in examples],
            [e.context for e in examples],
            [e.answers[0] if e.answers else None for e in examples],
        )
        y = {"start_logits": windows.start_positions, "end_logits": windows.end_positions}
        return {"x": windows.features, "y": y, "batch_size": self.args.batch_size}

    def check_texts(self, examples):
        return [e.context for e in examples[:16]]

    def score(self, model, examples):
        predicted = model.answer(
            [e.question for e in examples],
            [e.context for e in examples],
            allow_no_answer=self.allow_no_answer,
            batch_size=self.args.batch_size,
        )
        scores = task_metrics.squad_scores(
            [p["text"] for p in predicted], [[a for a, _ in e.answers] for e in examples]
        )
        return {"f1": scores["f1"], "exact_match": scores["exact_match"]}


class MultipleChoiceTask:
    serving = True
    metrics = ("accuracy",)

    def __init__(self, args):
        self.args = args

    def read(self, path, split):
        examples = read_race(path)
        counts = {len(e.choices) for e in examples}
        if len(counts) != 1:
            raise ValueError(f"{path!r}: every question needs the same number of choices; found {sorted(counts)}.")
        x = {
            "context": [e.context for e in examples],
            "question": [e.question for e in examples],
            "choices": [e.choices for e in examples],
        }
        return x, np.asarray([e.label for e in examples], "int32")

    def build(self, preset):
        preprocessor = AlbertMultipleChoicePreprocessor.from_preset(
            preset, sequence_length=self.args.sequence_length
        )
        return AlbertMultipleChoice.from_preset(preset, preprocessor=preprocessor)

    def fit_arguments(self, model, data):
        x, y = data
        return {"x": bucketed_dataset(model.preprocessor, x, y, batch_size=self.args.batch_size, seed=self.args.seed)}

    def check_texts(self, data):
        return list(data[0]["context"][:16])

    def score(self, model, data):
        x, y = data
        logits = model.predict(x, batch_size=self.args.batch_size, verbose=0)
        return {"accuracy": task_metrics.accuracy(logits.argmax(-1), y)}


class TokenTask:
    serving = True
    metrics = ("accuracy", "f1_macro")

    def __init__(self, args):
        self.args = args
        self.label_set = None

    def read(self, path, split):
        sentences, labels, found = read_conll(path, label_set=self.label_set)
        if split == "train":
            self.label_set = found
        index = {label: i for i, label in enumerate(self.label_set)}
        return sentences, [[index[t] for t in row] for row in labels]

    def build(self, preset):
        preprocessor = AlbertTokenClassifierPreprocessor.from_preset(
            preset, sequence_length=self.args.sequence_length
        )
        return AlbertTokenClassifier.from_preset(
            preset, num_classes=len(self.label_set), preprocessor=preprocessor
        )

    def fit_arguments(self, model, data):
        sentences, labels = data
        return {"x": bucketed_dataset(
            model.preprocessor, sentences, labels, batch_size=self.args.batch_size, seed=self.args.seed
        )}

    def check_texts(self, data):
        return [" ".join(words) for words in data[0][:16]]

    def score(self, model, data):
        sentences, labels = data
        predicted = model.predict_word_labels(sentences, batch_size=self.args.batch_size)
        flat_true = np.concatenate([np.asarray(row) for row in labels])
        flat_pred = np.concatenate([np.asarray(row) for row in predicted])
        return {name: task_metrics.METRICS[name](flat_pred, flat_true) for name in self.metrics}


TASKS = ("classification", "regression", "squad", "multiple_choice", "token_classification")


def make_task(args):
    if args.task == "classification":
        return TextTask(args)
    if args.task == "regression":
        return TextTask(args, regression=True)
    if args.task == "squad":
        return SquadTask(args)
    if args.task == "multiple_choice":
        return MultipleChoiceTask(args)
    if args.task == "token_classification":
        return TokenTask(args)
    raise ValueError(f"`--task` must be one of {TASKS}. Received: {args.task!r}")
