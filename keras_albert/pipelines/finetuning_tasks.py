"""What fine-tuning does differently per task: read, build, feed, score.

Each task is a small class with the same four methods (`read`, `build`,
`fit_arguments`, `score`) and a `metrics` tuple whose first entry selects
the best epoch, so `run_finetuning`'s loop is written once. `make_task`
builds one by name.
"""

import numpy as np

from keras_albert.data import task_metrics
from keras_albert.data.glue_tasks import glue_task
from keras_albert.data.glue_tasks import read_glue
from keras_albert.data.length_bucketed_batches import bucketed_batches
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
from keras_albert.pipelines.choice_predictions import choice_inputs
from keras_albert.pipelines.finetuning_settings import FINETUNING_TASKS
from keras_albert.pipelines.question_answering_predictions import squad_scores_of


class TextTask:
    """Classification (labels from the training file) or regression."""

    serving = True

    def __init__(self, sequence_length=128, batch_size=32, seed=0, regression=False,
                 glue_task_name=None, tfds=None, tfds_data_dir=None,
                 text_columns=("text",), label_column="label", pooling="cls"):
        self.sequence_length, self.batch_size, self.seed = sequence_length, batch_size, seed
        self.regression = regression
        self.glue_task_name, self.tfds, self.tfds_data_dir = glue_task_name, tfds, tfds_data_dir
        self.text_columns, self.label_column = tuple(text_columns), label_column
        self.pooling = pooling
        self.label_set = None
        self.glue = glue_task(glue_task_name) if glue_task_name else None
        self.metrics = (
            self.glue.metrics if self.glue
            else ("pearson", "spearman") if regression else ("accuracy", "f1_macro")
        )

    def read(self, path, split):
        if self.glue:
            examples = read_glue(self.glue_task_name, path, "train" if split == "train" else "dev")
        elif self.tfds:
            # The train / eval paths name the splits of the local TFDS copy.
            examples = read_tfds(
                self.tfds, str(path), self.text_columns,
                self.label_column, data_dir=self.tfds_data_dir,
            )
        else:
            examples = read_text_examples(
                path,
                text_columns=self.text_columns,
                label_column=self.label_column,
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
            preset, sequence_length=self.sequence_length
        )
        if self.regression:
            return AlbertClassifier.from_preset(
                preset, num_classes=1, preprocessor=preprocessor, pooling=self.pooling)
        # The names travel with the model (its config, presets, serving).
        return AlbertClassifier.from_preset(
            preset, num_classes=len(self.label_set), label_names=list(self.label_set),
            preprocessor=preprocessor, pooling=self.pooling,
        )

    def fit_arguments(self, model, data):
        # Batches padded to their length bucket (shuffled every epoch).
        x, y = data
        return {"x": bucketed_batches(model.preprocessor, x, y, batch_size=self.batch_size, seed=self.seed)}

    def check_texts(self, data):
        x = data[0]
        return list((x[0] if isinstance(x, tuple) else x)[:16])

    def score(self, model, data):
        x, y = data
        outputs = model.predict(x, batch_size=self.batch_size, verbose=0)
        predictions = outputs[:, 0] if self.regression else outputs.argmax(-1)
        return {name: task_metrics.METRICS[name](predictions, y) for name in self.metrics}


class SquadTask:
    serving = True
    metrics = ("f1", "exact_match")

    def __init__(self, sequence_length=384, batch_size=32, doc_stride=128):
        self.sequence_length, self.batch_size, self.doc_stride = sequence_length, batch_size, doc_stride
        self.allow_no_answer = False

    def read(self, path, split):
        examples = read_squad(path)
        if split == "train":
            self.allow_no_answer = any(e.is_impossible for e in examples)
        return examples

    def build(self, preset):
        preprocessor = AlbertQuestionAnswererPreprocessor.from_preset(
            preset, sequence_length=self.sequence_length, doc_stride=self.doc_stride
        )
        return AlbertQuestionAnswerer.from_preset(preset, preprocessor=preprocessor)

    def fit_arguments(self, model, examples):
        windows = model.preprocessor.windows(
            [e.question for e in examples],
            [e.context for e in examples],
            [e.answers[0] if e.answers else None for e in examples],
        )
        y = {"start_logits": windows.start_positions, "end_logits": windows.end_positions}
        return {"x": windows.features, "y": y, "batch_size": self.batch_size}

    def check_texts(self, examples):
        return [e.context for e in examples[:16]]

    def score(self, model, examples):
        return squad_scores_of(model, examples, self.allow_no_answer, self.batch_size)


class MultipleChoiceTask:
    serving = True
    metrics = ("accuracy",)

    def __init__(self, sequence_length=128, batch_size=32, seed=0):
        self.sequence_length, self.batch_size, self.seed = sequence_length, batch_size, seed

    def read(self, path, split):
        examples = read_race(path)
        counts = {len(e.choices) for e in examples}
        if len(counts) != 1:
            raise ValueError(f"{path!r}: every question needs the same number of choices; found {sorted(counts)}.")
        return choice_inputs(examples), np.asarray([e.label for e in examples], "int32")

    def build(self, preset):
        preprocessor = AlbertMultipleChoicePreprocessor.from_preset(
            preset, sequence_length=self.sequence_length
        )
        return AlbertMultipleChoice.from_preset(preset, preprocessor=preprocessor)

    def fit_arguments(self, model, data):
        x, y = data
        return {"x": bucketed_batches(model.preprocessor, x, y, batch_size=self.batch_size, seed=self.seed)}

    def check_texts(self, data):
        return list(data[0]["context"][:16])

    def score(self, model, data):
        x, y = data
        logits = model.predict(x, batch_size=self.batch_size, verbose=0)
        return {"accuracy": task_metrics.accuracy(logits.argmax(-1), y)}


class TokenTask:
    serving = True
    # Chunk-tagged labels (CoNLL NER's B-PER, I-LOC, ...) are chosen on
    # entity F1, CoNLL's own score, which word accuracy hides behind the
    # many O tags; other tags (parts of speech) on word accuracy.
    metrics = ("accuracy", "f1_macro")
    entity_metrics = ("entity_f1", "accuracy", "f1_macro")

    def __init__(self, sequence_length=128, batch_size=32, seed=0):
        self.sequence_length, self.batch_size, self.seed = sequence_length, batch_size, seed
        self.label_set = None

    def read(self, path, split):
        sentences, labels, found = read_conll(path, label_set=self.label_set)
        if split == "train":
            self.label_set = found
            if task_metrics.is_entity_scheme(found):
                self.metrics = self.entity_metrics
        index = {label: i for i, label in enumerate(self.label_set)}
        return sentences, [[index[t] for t in row] for row in labels]

    def build(self, preset):
        preprocessor = AlbertTokenClassifierPreprocessor.from_preset(
            preset, sequence_length=self.sequence_length
        )
        return AlbertTokenClassifier.from_preset(
            preset, num_classes=len(self.label_set), label_names=list(self.label_set),
            preprocessor=preprocessor,
        )

    def fit_arguments(self, model, data):
        sentences, labels = data
        return {"x": bucketed_batches(
            model.preprocessor, sentences, labels, batch_size=self.batch_size, seed=self.seed
        )}

    def check_texts(self, data):
        return [" ".join(words) for words in data[0][:16]]

    def score(self, model, data):
        sentences, labels = data
        predicted = model.predict_word_labels(sentences, batch_size=self.batch_size)
        return task_metrics.word_label_scores(predicted, labels, self.label_set, self.metrics)


def make_task(task, sequence_length=128, batch_size=32, seed=0, doc_stride=128,
              glue_task_name=None, tfds=None, tfds_data_dir=None,
              text_columns=("text",), label_column="label", pooling="cls"):
    """The task recipe named `task` (one of `FINETUNING_TASKS`); each takes
    the arguments that concern it."""
    if task in ("classification", "regression"):
        return TextTask(
            sequence_length, batch_size, seed, regression=task == "regression",
            glue_task_name=glue_task_name, tfds=tfds, tfds_data_dir=tfds_data_dir,
            text_columns=text_columns, label_column=label_column, pooling=pooling,
        )
    if task == "squad":
        return SquadTask(sequence_length, batch_size, doc_stride)
    if task == "multiple_choice":
        return MultipleChoiceTask(sequence_length, batch_size, seed)
    if task == "token_classification":
        return TokenTask(sequence_length, batch_size, seed)
    raise ValueError(f"`task` must be one of {FINETUNING_TASKS}. Received: task={task!r}")
