"""Classify texts with a fine-tuned classifier (labels by name and
probabilities), tag their words, answer questions or choose options.

  python -m keras_albert predict --preset=albert_tiny_en_student_supersense \\
      --texts=examples/data/supersense_texts.txt
  python -m keras_albert predict --preset=runs/my_task/preset --texts=texts.txt \\
      --output=predictions.tsv
  cat texts.txt | python -m keras_albert predict --saved_model=runs/my_task/serving --texts=-

--texts holds one text a line (blank lines skipped; - reads standard
input), or is a .tsv/.csv/.jsonl table whose --text_columns are read (two
columns for text pairs). Each text gets a row: the text, the predicted
label (by name), its probability and every class's probability (a
regressor's row: the text and its score), as JSON lines or as TSV
(--format; default: tsv for an --output ending in .tsv). A token
classifier preset (`finetune --task=token_classification`, CoNLL NER say)
tags each whitespace word instead: a row holds the text, its words and
their labels (null, in TSV `-`, for words past --sequence_length). A
question-answering preset (`finetune --task=squad`) answers
the rows of a table, its `question` and `context` columns (or the two
--text_columns): a row holds the question, the context (JSON lines only),
the answer, its character span in the context and its score; with
--allow_no_answer (SQuAD v2) the answer is "" where the model rates no
answer above every span. A multiple-choice preset (`finetune
--task=multiple_choice`) reads RACE JSON (a file or a directory of them;
`answers` not needed): a row holds the question, its options, the chosen
option's letter and text, its probability and every option's.
--preset is any task preset `finetune` writes (its preset/, or a bundled
name) and runs on every Keras backend; --saved_model is a serving
SavedModel of a text classifier (its serving/), TensorFlow only. Texts run in batches, each
padded to its length bucket; long inputs report progress in texts, with
the time left. Progress goes to stderr when the rows go to stdout. An
existing --output file is replaced only with --overwrite.
"""

from absl import flags

from keras_albert.cli.flag_types import define_boolean
from keras_albert.cli.flag_types import define_classifier_flags
from keras_albert.cli.flag_types import settings_from_flags
from keras_albert.pipelines.prediction_settings import OUTPUT_FORMATS
from keras_albert.pipelines.prediction_settings import STDOUT
from keras_albert.pipelines.prediction_settings import PredictSettings
from keras_albert.pipelines.prediction_settings import check_predict_settings

HELP = "classify texts, tag their words or answer questions with a fine-tuned preset (or a serving SavedModel)"


def define_flags(flag_values):
    defaults = PredictSettings(texts="")
    fv = flag_values
    flags.DEFINE_string("texts", None, "file of texts, one a line, or a table; - for standard input (required)",
                        required=True, flag_values=fv)
    flags.DEFINE_string("output", defaults.output, "file for the rows; - for standard output", flag_values=fv)
    flags.DEFINE_enum("format", defaults.format, OUTPUT_FORMATS,
                      "jsonl or tsv (default: tsv for an --output ending in .tsv, else jsonl)", flag_values=fv)
    define_classifier_flags(fv, defaults)
    define_boolean("allow_no_answer", defaults.allow_no_answer,
                   "question-answering preset: answer \"\" where no answer beats every span (SQuAD v2)", fv)


def settings_from(flag_values):
    return settings_from_flags(PredictSettings, flag_values, text_columns=tuple(flag_values.text_columns))


def check_inputs(flag_values):
    """Before TensorFlow is imported: files, flags, the output."""
    check_predict_settings(settings_from(flag_values))


def results_on_stdout(flag_values):
    return flag_values.output == STDOUT


def run(flag_values):
    from keras_albert.pipelines.predicting import predict_texts

    predict_texts(settings_from(flag_values))
