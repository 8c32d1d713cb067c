"""Score a fine-tuned classifier on a labelled table: metrics and confusion matrix.

  python -m keras_albert evaluate --preset=albert_tiny_en_student_supersense \\
      --data=examples/data/supersense_test_sample.tsv
  python -m keras_albert evaluate --preset=runs/my_task/preset --data=dev.tsv \\
      --text_columns sentence --output=runs/my_task/dev_scores.json

--data is a .tsv/.csv/.jsonl table with a header naming --text_columns
(two for text pairs) and --label_column; its labels are the classifier's
class names. Writes JSON: the metrics `finetune` reports for classification
(accuracy, macro F1), per-class precision, recall, F1 and support, and the
confusion matrix (rows: true label, columns: predicted label); for a
regressor (`finetune --task=regression`, numeric labels) Pearson and
Spearman correlation and the mean squared error. For a token classifier
preset (`finetune --task=token_classification`) --data is CoNLL columns
(word first, tag last, a blank line between sentences; any file name):
word accuracy and macro F1, entity F1 for chunk tags (B-PER, I-LOC, ...),
per-tag scores and the confusion matrix, as `finetune` scores it. For a
question-answering preset (`finetune --task=squad`) --data is
a SQuAD v1.1 or v2.0 JSON file: F1 and exact match, as `finetune` scores
them (no answer allowed where the file has unanswerable questions). For a
multiple-choice preset (`finetune --task=multiple_choice`) --data is RACE
JSON, a file or a directory of them: accuracy, as `finetune` scores it. --preset
runs on every Keras backend; --saved_model (a serving SavedModel) needs
TensorFlow. Progress goes to stderr when the report goes to stdout. An
existing --output file is replaced only with --overwrite.
"""

from absl import flags

from keras_albert.cli.flag_types import define_classifier_flags
from keras_albert.cli.flag_types import settings_from_flags
from keras_albert.pipelines.prediction_settings import STDOUT
from keras_albert.pipelines.prediction_settings import EvaluateSettings
from keras_albert.pipelines.prediction_settings import check_evaluate_settings

HELP = "score a fine-tuned classifier on a labelled file: metrics, confusion matrix (JSON)"


def define_flags(flag_values):
    defaults = EvaluateSettings(data="")
    fv = flag_values
    flags.DEFINE_string("data", None, "labelled .tsv/.csv/.jsonl table (required)", required=True, flag_values=fv)
    flags.DEFINE_string("label_column", defaults.label_column, "column holding the label", flag_values=fv)
    flags.DEFINE_string("output", defaults.output, "JSON file for the report; - for standard output",
                        flag_values=fv)
    define_classifier_flags(fv, defaults)


def settings_from(flag_values):
    return settings_from_flags(EvaluateSettings, flag_values, text_columns=tuple(flag_values.text_columns))


def check_inputs(flag_values):
    """Before TensorFlow is imported: files, flags, the output."""
    check_evaluate_settings(settings_from(flag_values))


def results_on_stdout(flag_values):
    return flag_values.output == STDOUT


def run(flag_values):
    from keras_albert.pipelines.evaluating import evaluate_classifier

    evaluate_classifier(settings_from(flag_values))
