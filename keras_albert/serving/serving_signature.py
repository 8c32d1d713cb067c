"""What a task serves from raw strings, and the outputs exporters share.

Each task's signature (`task_signatures.serving_signature(task, ...)`)
returns a `ServingSignature`, so exporters ask for the task's signature
instead of guessing the task from its attributes. Everything here is plain
TensorFlow on the task's own layers (TensorFlow-only, like all of
`serving/`): exporters add tracking, writing and checks.
"""

import collections

import numpy as np
import tensorflow as tf

from keras_albert.models.length_buckets import bucket_lengths
from keras_albert.models.length_buckets import check_buckets

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
    return tf.TensorSpec([None] * rank, tf.string, name=name)


def logit_outputs(logits, regression=False):
    """`logits` and, unless `regression` (outputs are not squashed),
    `probabilities`, both float32: the served outputs of pooled tasks."""
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


def argmax_label_names(logits, label_names):
    """The name of the highest-scoring class along the last axis (a string
    tensor of `logits`' shape without that axis); a serving graph's op."""
    return tf.gather(tf.constant(label_names, tf.string), tf.argmax(logits, -1, output_type=tf.int32))


def bucketed_graph_call(call, features, shapes, empty_output):
    """`call(features)` in a graph, each example run at the smallest of
    `shapes` that holds it; outputs in the input order.

    For graphs that take any batch (a serving signature): examples are
    partitioned by bucket, each non-empty part is sliced to its length and
    run, and the results are stitched back. Only pooled outputs (one row
    per example) can be stitched; `empty_output(features)` builds the
    zero-row output of a bucket no example falls in.
    """
    lengths = tf.reduce_sum(tf.cast(features["padding_mask"], tf.int32), -1)
    while lengths.shape.rank > 1:
        lengths = tf.reduce_max(lengths, -1)
    lengths = tf.minimum(lengths, shapes[-1])
    bucket = tf.searchsorted(tf.constant(shapes, tf.int32), lengths, side="left")
    rows = tf.dynamic_partition(tf.range(tf.shape(lengths)[0]), bucket, len(shapes))
    parts = []
    for index, length in enumerate(shapes):
        part = {name: tf.gather(value, rows[index])[..., :length] for name, value in features.items()}
        parts.append(
            tf.cond(
                tf.size(rows[index]) > 0,
                lambda part=part: call(part),
                lambda part=part: empty_output(part),
            )
        )
    return tf.dynamic_stitch(rows, parts)
