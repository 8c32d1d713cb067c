"""`AlbertCausalLM.generate` as a raw-string serving signature (issue 37, item 5).

`prompt` [batch] strings -> `text` (each prompt's continuation, the prompt
included, special tokens stripped, as `generate` returns it), `token_ids`
and `padding_mask` [batch, max_length] (1 on the prompt and the generated
tokens up to and including `[SEP]`). Decoding is greedy, with the key/value
cache, in one TensorFlow while loop: a served model answers the same
prompt with the same text (random samplers would need their seed state in
the graph). Prompts longer than the window are cut to it by the packer,
as `generate_preprocess` does.
"""

import contextlib

import numpy as np
import tensorflow as tf
from keras_hub.samplers import GreedySampler

from keras_albert.serving.serving_signature import ServingSignature
from keras_albert.serving.serving_signature import check_serving_preprocessor
from keras_albert.serving.serving_signature import string_spec


@contextlib.contextmanager
def _greedy(task):
    """`task` decoding greedily with the cache while tracing; its own
    sampler and cache mode come back after."""
    sampler, use_cache = getattr(task, "sampler", None), task.use_cache
    task.sampler, task.use_cache = GreedySampler(), True
    try:
        yield
    finally:
        task.sampler, task.use_cache = sampler, use_cache


def causal_lm_signature(task, check_texts, length_buckets=None, pair=False, max_length=None):
    """Raw-string serving of greedy `generate`: `prompt` -> `text`,
    `token_ids`, `padding_mask`, decoding up to `max_length` tokens
    (default: the preprocessor's `sequence_length`). `check_texts` (cut to
    their first words) make the example prompts; `length_buckets` and
    `pair` are unused. Returns a `ServingSignature` whose expected outputs
    are the token ids `generate` decodes."""
    check_serving_preprocessor(task)
    preprocessor = task.preprocessor
    tokenizer = preprocessor.tokenizer
    length = max_length or preprocessor.sequence_length
    special = tf.constant(sorted(set(tokenizer.special_token_ids)), tf.int32)
    stop = (tokenizer.end_token_id,)

    def serve(prompt):
        features = preprocessor.generate_preprocess(prompt, sequence_length=length)
        with _greedy(task):
            generated = task.generate_step(features, stop_token_ids=stop)
        token_ids = tf.cast(generated["token_ids"], tf.int32)
        padding_mask = tf.cast(generated["padding_mask"], tf.int32)
        keep = tf.logical_and(
            padding_mask > 0,
            tf.reduce_all(token_ids[..., None] != special, axis=-1),
        )
        text = tokenizer.detokenize(tf.ragged.boolean_mask(token_ids, keep))
        return {"text": text, "token_ids": token_ids, "padding_mask": padding_mask}

    prompts = [" ".join(text.split()[:3]) or "a" for text in check_texts] or ["a"]

    def expected():
        # The same decoding run eagerly in this process: the reference the
        # loaded SavedModel must reproduce.
        packed = preprocessor.generate_preprocess(tf.constant(prompts), sequence_length=length)
        with _greedy(task):
            generated = task.generate_step(packed, stop_token_ids=stop)
        return {"token_ids": np.asarray(generated["token_ids"], "float32")}

    return ServingSignature(
        [string_spec("prompt")], serve, {"prompt": tf.constant(prompts)}, expected
    )
