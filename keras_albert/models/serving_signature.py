"""What a task serves from raw strings, and the outputs exporters share.

Every task model owns its serving signature (`task.serving_signature(...)`
returns a `ServingSignature`), so exporters ask the task what to serve
instead of guessing the task from its attributes. Everything here is plain
TensorFlow on the task's own layers: exporters add tracking, writing and
checks.
"""

import collections

import numpy as np

from keras_albert.models.length_buckets import bucket_lengths
from keras_albert.models.length_buckets import bucketed_graph_call
from keras_albert.models.length_buckets import check_buckets
from keras_albert.utils.backend import require_tensorflow

ServingSignature = collections.namedtuple(
    "ServingSignature", ["input_specs", "serve", "example_inputs", "expected_outputs"]
)
ServingSignature.__doc__ = """A task's raw-string serving function.

Fields:
    input_specs: list of `tf.TensorSpec`, one per argument of `serve`
        (their names are the served input names).
    serve: function of string tensors -> dict of output tensors.
    example_inputs: dict of string tensors built from the check texts,
        named as `input_specs`.
    expected_outputs: function () -> dict of float32 arrays: what the Keras
        model gives on `example_inputs` (a subset of `serve`'s outputs), to
        compare an export with.
"""


def string_spec(name, rank=1):
    """A string input of any batch size (and any size on the other axes)."""
    tf = require_tensorflow("Raw-string serving", backend_too=True)
    return tf.TensorSpec([None] * rank, tf.string, name=name)


def logit_outputs(logits, regression=False):
    """`logits` and, unless `regression` (outputs are not squashed),
    `probabilities`, both float32: the served outputs of pooled tasks."""
    tf = require_tensorflow("Raw-string serving", backend_too=True)
    logits = tf.cast(logits, tf.float32)
    if regression:
        return {"logits": logits}
    return {"logits": logits, "probabilities": tf.nn.softmax(logits, axis=-1)}


def float32_logits(compute):
    """`expected_outputs` for a function returning the Keras logits."""
    return lambda: {"logits": np.asarray(compute(), "float32")}


def pooled_logits(task, buckets, empty_output):
    """features -> float32 logits, each example run at the smallest of
    `buckets` that holds it (`empty_output(features)` shapes an empty
    bucket); at the full length when `buckets` is None."""
    tf = require_tensorflow("Raw-string serving", backend_too=True)
    def call(features):
        return tf.cast(task(features, training=False), tf.float32)

    buckets = check_buckets(buckets)
    if not buckets:
        return call
    shapes = bucket_lengths(task.preprocessor.sequence_length, buckets)
    return lambda features: bucketed_graph_call(call, features, shapes, empty_output)


def check_serving_preprocessor(task):
    """Raw-string serving tokenizes in the graph: the task needs a preprocessor."""
    if getattr(task, "preprocessor", None) is None:
        raise ValueError(
            "A serving SavedModel tokenizes raw strings, so the task needs a "
            "preprocessor. Received a task with preprocessor=None."
        )
