"""Standard TFLite metadata for classifiers: labels, tokenizer, descriptions.

A token-input classifier file with this metadata runs in the on-device text
runtimes that read it: MediaPipe Tasks' `TextClassifier` takes a raw
string, tokenizes it with the SentencePiece model stored in the file, packs
`[CLS] text [SEP]` at the file's fixed sequence length and names the
classes from the stored label file. What the export does for that:

- the file outputs `probabilities` (softmax of the logits): the metadata
  declares the output a score in [0, 1], and MediaPipe's thresholds and
  ranking treat it as one;
- the stored SentencePiece model is `folded_sentencepiece`'s: ALBERT's
  preprocessing (whitespace, LaTeX quotes, NFKD, accent stripping,
  lowercasing) lives in its normaliser, so any SentencePiece runtime gives
  `AlbertTokenizer`'s ids. MediaPipe also lowercases ASCII before
  tokenizing, so cased (`lowercase=False`) tokenizers are refused;
- the inputs keep their names (`token_ids`, `segment_ids`,
  `padding_mask`) and are described as the runtimes' `ids`, `segment_ids`
  and `mask`.

The metadata and its associated files (`labels.txt`, `sentencepiece.model`;
appended to the flatbuffer as a zip) are written with MediaPipe's metadata
writers (`pip install keras-albert[tflite-metadata]`).
"""

import importlib.util
import os
import tempfile

import tensorflow as tf

from keras_albert.export.folded_sentencepiece import folded_sentencepiece_proto
from keras_albert.export.metadata_parser_version import ensure_metadata_version_helper
from keras_albert.models.albert_classifier import AlbertClassifier
from keras_albert.utils.label_file import check_label_lines
from keras_albert.utils.native_notices import TFLITE_NOTICES
from keras_albert.utils.native_notices import notices_held_back

METADATA_EXTRA_HINT = "pip install keras-albert[tflite-metadata]"
OUTPUT_NAME = "probabilities"
LABEL_FILE = "labels.txt"
TOKENIZER_FILE = "sentencepiece.model"
# Our input names -> the BERT input each one is described as.
_DESCRIBED_AS = {"token_ids": "ids_name", "padding_mask": "mask_name", "segment_ids": "segment_name"}


def metadata_writer_module():
    """MediaPipe's `metadata_writer` module, or an ImportError naming the
    extra to install."""
    if importlib.util.find_spec("mediapipe") is None:
        raise ImportError(
            "TFLite metadata is written with MediaPipe's metadata writers, an optional "
            f"dependency: {METADATA_EXTRA_HINT} (CLI: or pass --nometadata)."
        )
    ensure_metadata_version_helper()
    from mediapipe.tasks.python.metadata.metadata_writers import metadata_writer

    return metadata_writer


def check_metadata_task(task):
    """Raises ValueError unless `task` can carry text-classifier metadata."""
    if not isinstance(task, AlbertClassifier):
        raise ValueError(
            "TFLite metadata describes text classifiers (`AlbertClassifier` with "
            f"`label_names`). Received a {type(task).__name__}; export it with metadata=False "
            "(CLI: --nometadata)."
        )
    if task.is_regression:
        raise ValueError(
            "TFLite metadata describes class scores with a label per class; a regressor "
            "(num_classes=1) has neither. Export it with metadata=False (CLI: --nometadata)."
        )
    if not task.label_names:
        raise ValueError(
            "TFLite metadata needs the classifier's `label_names` (the runtimes name "
            "classes from them); this classifier has label_names=None. Give it "
            "label_names=[...] (one per class) or export with metadata=False "
            "(CLI: --nometadata)."
        )
    try:
        check_label_lines(task.label_names)
    except ValueError as error:
        raise ValueError(f"{error} Or export with metadata=False (CLI: --nometadata).") from None
    preprocessor = getattr(task, "preprocessor", None)
    tokenizer = getattr(preprocessor, "tokenizer", None)
    if tokenizer is None or getattr(tokenizer, "proto", None) is None:
        raise ValueError(
            "TFLite metadata stores the task's SentencePiece model: the classifier needs a "
            "preprocessor with its tokenizer."
        )
    if not tokenizer.lowercase:
        raise ValueError(
            "MediaPipe lowercases ASCII before tokenizing, so a cased tokenizer "
            "(lowercase=False) would see other ids than it was trained on. TFLite "
            "metadata supports uncased tokenizers only; export with metadata=False "
            "(CLI: --nometadata)."
        )


def metadata_by_default(task):
    """Whether a TFLite export of `task` carries metadata unless told: yes
    for classifiers with `label_names` (the runtimes need the names)."""
    return isinstance(task, AlbertClassifier) and not task.is_regression and bool(task.label_names)


class ProbabilityOutputs:
    """`task` as the TFLite exporter sees it for a metadata file: its one
    output is `probabilities`, the softmax of the logits. Every other
    attribute is the task's."""

    def __init__(self, task):
        self.task = task

    def __call__(self, features, training=False):
        logits = tf.cast(self.task(features, training=training), tf.float32)
        return {OUTPUT_NAME: tf.nn.softmax(logits, axis=-1)}

    def __getattr__(self, name):
        return getattr(self.task, name)


def metadata_outputs(task, metadata):
    """What the TFLite exporter converts: `task` itself, or with `metadata`
    the task as `ProbabilityOutputs`, after checking it (see
    `check_metadata_task`) and the writer's presence, before any conversion."""
    if not isinstance(metadata, bool):
        raise ValueError(f"`metadata` must be True or False. Received: metadata={metadata!r}")
    if not metadata:
        return task
    check_metadata_task(task)
    metadata_writer_module()
    return ProbabilityOutputs(task)


def _input_tensor_names(content):
    """{signature input name: tensor name in the flatbuffer}."""
    from ai_edge_litert.interpreter import Interpreter

    details = Interpreter(model_content=bytes(content)).get_signature_runner().get_input_details()
    names = {name: detail["name"] for name, detail in details.items()}
    if sorted(names) != sorted(_DESCRIBED_AS):
        raise ValueError(
            f"TFLite metadata describes inputs {sorted(_DESCRIBED_AS)}; the file takes {sorted(names)}."
        )
    return names


def _description(task, sequence_length):
    return (
        f"ALBERT text classifier, {task.num_classes} classes. Inputs: ids, mask, segment_ids "
        f"([1, {sequence_length}] int32, '[CLS] text [SEP]' then padding with 0); output: "
        f"{OUTPUT_NAME} (softmax). {TOKENIZER_FILE} holds ALBERT's text preprocessing "
        "(lowercasing, NFKD, accent stripping) in its normaliser."
    )


def add_classifier_metadata(content, task, sequence_length, name="ALBERT text classifier"):
    """`content` (a token-input classifier file with a `probabilities`
    output) with TFLite metadata: general info, the three BERT inputs, the
    folded SentencePiece model and the label file.

    Returns:
        The new flatbuffer bytes (associated files appended as a zip).
    """
    if isinstance(task, ProbabilityOutputs):
        task = task.task
    check_metadata_task(task)
    writers = metadata_writer_module()
    tokenizer = task.preprocessor.tokenizer
    # The interpreter and SentencePiece print notices while this runs.
    with notices_held_back(TFLITE_NOTICES):
        tensor_names = {_DESCRIBED_AS[k]: v for k, v in _input_tensor_names(content).items()}
        with tempfile.TemporaryDirectory() as directory:
            # The writers store associated files under their base names.
            model_path = os.path.join(directory, TOKENIZER_FILE)
            with open(model_path, "wb") as handle:
                handle.write(folded_sentencepiece_proto(tokenizer.proto, tokenizer.lowercase))
            writer = writers.MetadataWriter.create(bytearray(content))
            writer.add_general_info(name, _description(task, sequence_length))
            writer.add_bert_text_input(writers.SentencePieceTokenizer(model_path), **tensor_names)
            writer.add_classification_output(
                writers.Labels().add(list(task.label_names), exported_filename=LABEL_FILE),
                name=OUTPUT_NAME,
                description="Probability of each class, in the order of labels.txt.",
            )
            populated, _ = writer.populate()
            # Collected now, not at interpreter exit, where its __del__ (which
            # removes its own temporary folder) fails on a torn-down `os`.
            del writer
    return bytes(populated)
