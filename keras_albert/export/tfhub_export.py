"""TF-Hub modules in the ALBERT interface: an encoder and a preprocessor.

The encoder is a TF2 reusable SavedModel with the variables of TF-Hub's
`albert_en_base` (the TF Model Garden's `AlbertEncoder` names, attention
kernels per head), so `hub.load`, `hub.KerasLayer(encoder, trainable=True)`
in tf-keras and our own `convert --from=tfhub` all read it:

    encoder(dict(input_word_ids=, input_mask=, input_type_ids=), training=)
      -> {"pooled_output", "sequence_output", "encoder_outputs", "default"}
    encoder.mlm(dict(..., masked_lm_positions=)) -> {..., "mlm_logits"}
      (only when the preset holds an MLM head)

The preprocessor maps strings to those inputs:

    preprocessor(strings) -> encoder inputs (seq_length 128)
    preprocessor.tokenize(strings) -> ragged token ids
    preprocessor.bert_pack_inputs([tokens_a, (tokens_b)], seq_length) -> encoder inputs

A classifier's `label_names`, when it has them, are written beside the
modules as `labels.txt` (line i names class id i); the modules themselves
hold the encoder only, not the classification head.

The encoder recomputes ALBERT in plain TensorFlow on its own variables
(copied from the Keras model); the export checks it against the Keras model
before the directory is renamed into place. The Model Garden layout has one
shared layer, so only `sharing="all"` with one group and one inner block
exports.
"""

import json
import logging
import math
import pathlib

import numpy as np
import tensorflow as tf
import tensorflow_text

from keras_albert.convert.tf1_names import get_model_weights
from keras_albert.convert.tfhub_module import ENCODER_SHAPE_FILE
from keras_albert.convert.tfhub_module import HUB_MLM_NAMES
from keras_albert.convert.tfhub_module import HUB_NAMES
from keras_albert.export.label_file import write_label_file
from keras_albert.models.albert_tokenizer import albert_normalize_text
from keras_albert.utils.atomic_directory import atomic_directory
from keras_albert.utils.atomic_directory import check_replaceable
from keras_albert.utils.progress import logged_step

_MASK_PENALTY = -1e9
PARITY_TOLERANCE = 1e-5
_logger = logging.getLogger(__name__)


def _gelu(x):
    return 0.5 * x * (1.0 + tf.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * tf.pow(x, 3))))


def _layer_norm(x, gamma, beta, epsilon):
    mean, variance = tf.nn.moments(x, axes=[-1], keepdims=True)
    return (x - mean) * tf.math.rsqrt(variance + epsilon) * gamma + beta


def check_hub_exportable(backbone):
    config = backbone.get_config()
    problems = [
        f"{key}={config.get(key)!r}"
        for key, value in (
            ("sharing", "all"), ("num_groups", 1), ("num_inner_repetitions", 1),
            ("attention", "full"), ("activation", "gelu_approximate"),
        )
        if config.get(key, value) != value
    ]
    if problems:
        raise ValueError(
            "TF-Hub's ALBERT layout holds one shared layer with tanh GELU and full "
            f"attention; this backbone has {', '.join(problems)}."
        )


class HubMaskedLM(tf.Module):
    """The `mlm` subobject: the encoder plus Google's MLM head."""

    variables = None
    trainable_variables = None
    regularization_losses = None

    def __init__(self, encoder, head):
        super().__init__()
        self._encoder = encoder
        self._head = head
        self.variables = list(encoder.variables) + list(head.values())
        self.trainable_variables = list(self.variables)
        self.regularization_losses = []
        specs = dict(encoder.input_specs, masked_lm_positions=tf.TensorSpec([None, None], tf.int32))
        self.__call__ = tf.function(self._call, input_signature=[specs, tf.TensorSpec([], tf.bool)])

    def _call(self, inputs, training=False):
        outputs = self._encoder._encode(inputs)
        head = self._head
        gathered = tf.gather(outputs["sequence_output"], inputs["masked_lm_positions"], batch_dims=1)
        hidden = _gelu(tf.matmul(gathered, head["dense/kernel"]) + head["dense/bias"])
        hidden = _layer_norm(hidden, head["LayerNorm/gamma"], head["LayerNorm/beta"], self._encoder.epsilon)
        table = self._encoder.named["word_embeddings/embeddings"]
        outputs["mlm_logits"] = tf.einsum("bpe,ve->bpv", hidden, table) + head["output_bias"]
        return outputs


class HubEncoder(tf.Module):
    """ALBERT on variables named as in TF-Hub's `albert_en_base`."""

    # TF-Hub's reusable SavedModel API wants plain lists here, and tf.Module
    # makes these read-only properties unless the class shadows them.
    variables = None
    trainable_variables = None
    regularization_losses = None

    def __init__(self, backbone, weights, with_mlm):
        super().__init__()
        hidden = backbone.hidden_dim
        heads = backbone.num_heads
        self.num_layers = backbone.num_layers
        self.num_heads = heads
        self.epsilon = backbone.get_config().get("layer_norm_epsilon", 1e-12)
        by_tf1 = {tf1: hub for hub, tf1 in HUB_NAMES}
        self.named = {}
        for tf1, hub in by_tf1.items():
            array = weights[tf1]
            if "self_attention/" in hub and hub.endswith("kernel"):
                array = array.reshape(heads, -1, hidden) if "attention_output" in hub else array.reshape(hidden, heads, -1)
            elif "self_attention/" in hub and "attention_output" not in hub:
                array = array.reshape(heads, -1)
            self.named[hub] = tf.Variable(array, name=hub)
        self.variables = list(self.named.values())
        self.trainable_variables = list(self.variables)
        self.regularization_losses = []
        self.input_specs = {
            name: tf.TensorSpec([None, None], tf.int32, name=name)
            for name in ("input_word_ids", "input_mask", "input_type_ids")
        }
        self.__call__ = tf.function(
            self._call, input_signature=[self.input_specs, tf.TensorSpec([], tf.bool)]
        )
        if with_mlm:
            head = {
                hub.replace("cls/predictions/transform/", "").replace("cls/predictions/", ""): tf.Variable(
                    weights[tf1], name=hub
                )
                for hub, tf1 in HUB_MLM_NAMES[:-1]
            }
            head["output_bias"] = head.pop("output_bias/bias")
            self.mlm = HubMaskedLM(self, head)

    def _attention(self, x, mask):
        v = self.named
        scope = "transformer/self_attention/"
        q = tf.einsum("bsh,hnd->bsnd", x, v[scope + "query/kernel"]) + v[scope + "query/bias"]
        k = tf.einsum("bsh,hnd->bsnd", x, v[scope + "key/kernel"]) + v[scope + "key/bias"]
        values = tf.einsum("bsh,hnd->bsnd", x, v[scope + "value/kernel"]) + v[scope + "value/bias"]
        head_dim = tf.cast(tf.shape(q)[-1], tf.float32)
        scores = tf.einsum("bqnd,bknd->bnqk", q * tf.math.rsqrt(head_dim), k)
        scores += (1.0 - tf.cast(mask, tf.float32)[:, None, None, :]) * _MASK_PENALTY
        context = tf.einsum("bnqk,bknd->bqnd", tf.nn.softmax(scores, -1), values)
        out = tf.einsum("bqnd,ndh->bqh", context, v[scope + "attention_output/kernel"])
        return out + v[scope + "attention_output/bias"]

    def _encode(self, inputs):
        v = self.named
        ids = inputs["input_word_ids"]
        length = tf.shape(ids)[1]
        embedded = (
            tf.gather(v["word_embeddings/embeddings"], ids)
            + v["position_embedding/embeddings"][None, :length]
            + tf.gather(v["type_embeddings/embeddings"], inputs["input_type_ids"])
        )
        embedded = _layer_norm(embedded, v["embeddings/layer_norm/gamma"], v["embeddings/layer_norm/beta"], self.epsilon)
        x = tf.matmul(embedded, v["embedding_projection/kernel"]) + v["embedding_projection/bias"]
        outputs = []
        for _ in range(self.num_layers):
            x = _layer_norm(
                x + self._attention(x, inputs["input_mask"]),
                v["transformer/self_attention_layer_norm/gamma"],
                v["transformer/self_attention_layer_norm/beta"],
                self.epsilon,
            )
            inner = _gelu(tf.matmul(x, v["transformer/intermediate/kernel"]) + v["transformer/intermediate/bias"])
            x = _layer_norm(
                x + tf.matmul(inner, v["transformer/output/kernel"]) + v["transformer/output/bias"],
                v["transformer/output_layer_norm/gamma"],
                v["transformer/output_layer_norm/beta"],
                self.epsilon,
            )
            outputs.append(x)
        pooled = tf.tanh(tf.matmul(x[:, 0], v["pooler_transform/kernel"]) + v["pooler_transform/bias"])
        return {"pooled_output": pooled, "sequence_output": x, "encoder_outputs": outputs, "default": pooled}

    def _call(self, inputs, training=False):
        # Dropout is 0 in every released ALBERT v2; training changes nothing.
        return self._encode(inputs)


class HubPreprocessor(tf.Module):
    """Strings -> encoder inputs, with ALBERT's normalisation and vocabulary."""

    def __init__(self, vocabulary, lowercase=True, seq_length=128):
        super().__init__()
        self.vocab_file = tf.saved_model.Asset(vocabulary)
        self._tokenizer = tensorflow_text.SentencepieceTokenizer(
            model=pathlib.Path(vocabulary).read_bytes(), out_type=tf.int32
        )
        self._lowercase = lowercase
        self._seq_length = seq_length
        strings = tf.TensorSpec([None], tf.string)
        ragged = tf.RaggedTensorSpec([None, None], tf.int32)
        self.tokenize = tf.function(self._tokenize, input_signature=[strings])
        self.bert_pack_inputs = tf.function(self._pack)
        for segments in (1, 2):
            self.bert_pack_inputs.get_concrete_function([ragged] * segments, tf.TensorSpec([], tf.int32))
        self.__call__ = tf.function(self._call, input_signature=[strings])

    def _tokenize(self, strings):
        return self._tokenizer.tokenize(albert_normalize_text(strings, lowercase=self._lowercase))

    def _pack(self, segments, seq_length=128):
        seq_length = tf.cast(seq_length, tf.int32)
        budget = seq_length - len(segments) - 1
        trimmed = tensorflow_text.RoundRobinTrimmer(max_seq_length=budget).trim(list(segments))
        ids, types = tensorflow_text.combine_segments(trimmed, start_of_sequence_id=2, end_of_segment_id=3)
        shape = tf.stack([ids.nrows(), tf.cast(seq_length, tf.int64)])
        word_ids = ids.to_tensor(default_value=0, shape=shape)
        return {
            "input_word_ids": word_ids,
            "input_mask": tf.cast(word_ids != 0, tf.int32),
            "input_type_ids": types.to_tensor(default_value=0, shape=shape),
        }

    def _call(self, strings):
        return self._pack([self._tokenize(strings)], self._seq_length)


def _check_encoder(directory, backbone):
    loaded = tf.saved_model.load(str(directory))
    rng = np.random.default_rng(0)
    length = min(16, backbone.max_sequence_length)
    ids = rng.integers(5, backbone.vocabulary_size, (2, length)).astype("int32")
    mask = np.ones_like(ids)
    mask[1, length // 2 :] = 0
    types = np.zeros_like(ids)
    served = loaded({"input_word_ids": ids, "input_mask": mask, "input_type_ids": types}, False)
    expected = backbone({"token_ids": ids, "padding_mask": mask, "segment_ids": types})
    difference = max(
        float(np.abs(np.asarray(served["pooled_output"]) - np.asarray(expected["pooled_output"])).max()),
        float(np.abs((np.asarray(served["sequence_output"]) - np.asarray(expected["sequence_output"])) * mask[..., None]).max()),
    )
    if difference > PARITY_TOLERANCE:
        raise ValueError(
            f"The TF-Hub encoder differs from the Keras backbone by {difference:.2e} "
            f"(allowed {PARITY_TOLERANCE}); nothing was written."
        )
    return difference


def export_tfhub(model, vocabulary, directory, overwrite=False):
    """Writes `directory/encoder` and `directory/preprocessor`; returns the parity measured.

    Args:
        model: an `AlbertBackbone`, an `AlbertPretrainer` (adds `mlm`), or
            a task (its backbone is exported; its `label_names`, if any, go
            to `directory/labels.txt`).
        vocabulary: SentencePiece model bytes (the preprocessor's vocabulary).
        directory: output directory; replaced only after the check passed,
            and only if it is empty or holds an earlier TF-Hub export.
        overwrite: replace `directory` whatever it holds.
    """
    backbone = getattr(model, "backbone", model)
    check_hub_exportable(backbone)
    directory = check_replaceable(directory, "tfhub_modules", overwrite, name="directory")
    # The MLM head comes with a pretrainer; of any other task, the backbone.
    weights = get_model_weights(model if hasattr(model, "masked_lm_head") else backbone)
    with atomic_directory(directory, "tfhub_modules", overwrite) as staging:
        staging = pathlib.Path(staging)
        with logged_step(_logger, f"Writing the TF-Hub encoder for {str(directory)!r}"):
            encoder = HubEncoder(backbone, weights, with_mlm=hasattr(model, "masked_lm_head"))
            tf.saved_model.save(encoder, str(staging / "encoder"))
            # No variable holds the depth: recorded beside the module, so
            # that `convert --from=tfhub` reads this export back unaided.
            (staging / "encoder" / "assets").mkdir(exist_ok=True)
            (staging / "encoder" / "assets" / ENCODER_SHAPE_FILE).write_text(json.dumps(
                {"num_layers": backbone.num_layers, "num_heads": backbone.num_heads}))
        with logged_step(_logger, "Writing the TF-Hub preprocessor"):
            vocabulary_file = staging / "vocabulary.spm"
            vocabulary_file.write_bytes(vocabulary)
            preprocessor = HubPreprocessor(str(vocabulary_file))
            tf.saved_model.save(preprocessor, str(staging / "preprocessor"))
            vocabulary_file.unlink()
        label_names = getattr(model, "label_names", None)
        if label_names:
            write_label_file(staging, label_names)
        with logged_step(_logger, "Checking the encoder against the Keras backbone"):
            difference = _check_encoder(staging / "encoder", backbone)
    return difference
