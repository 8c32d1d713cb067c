"""ALBERT's encoder: a stack of post-LN blocks with cross-layer sharing."""

import keras
from keras import ops

from keras_albert.layers.bottleneck_sublayers import bottleneck_sublayer_factories
from keras_albert.layers.normalization import check_normalization
from keras_albert.layers.sharing import sharing_plan
from keras_albert.layers.transformer_sublayers import sublayer_factories
from keras_albert.utils.validation import check_divisible
from keras_albert.utils.validation import check_positive_int
from keras_albert.utils.validation import check_rate


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertEncoder(keras.layers.Layer):
    """`num_layers` virtual layers over shared attention/feed-forward weights.

    Layer `l` uses group `int(l / num_layers * num_groups)` (no divisibility
    requirement, as Google's release); each group runs
    `num_inner_repetitions` blocks in order. `sharing` picks what a group
    shares: `"all"` (ALBERT), `"attention"`, `"ffn"`, or `"none"` (BERT:
    every layer owns its weights, groups are ignored).

    `call` returns the list of every virtual layer's output; the last one is
    the sequence output. `outputs_and_attention` also returns each virtual
    layer's attention probabilities (for distillation).

    MobileBERT-style students: `bottleneck_dim` (H -> B bottleneck blocks,
    Q and K from the bottleneck, V from the block input),
    `num_feedforward_stacks`, `normalization="no_norm"` and
    `activation="relu"`. The defaults build ALBERT's blocks unchanged;
    sharing works the same for both kinds of block.

    Decoders (GPT-2 style, ALBERT's blocks only): `causal=True` lets each
    position attend to itself and earlier positions only, under every
    sharing strategy; `normalize_first=True` uses GPT-2's pre-LN blocks and
    a final LayerNorm on the last output. `call_with_cache` then decodes new
    positions against a key/value cache holding one entry per block run
    (`num_cached_blocks`): shared weights see different inputs at every
    layer, so their keys are not shared.

    Example:
    >>> encoder = AlbertEncoder(num_layers=4, num_heads=2, hidden_dim=8,
    ...                         intermediate_dim=16, num_groups=2)
    >>> outputs = encoder(np.ones((1, 3, 8), "float32"))
    >>> len(outputs), tuple(outputs[-1].shape)
    (4, (1, 3, 8))
    """

    def __init__(
        self,
        num_layers,
        num_heads,
        hidden_dim,
        intermediate_dim,
        num_groups=1,
        num_inner_repetitions=1,
        sharing="all",
        activation="gelu_approximate",
        dropout=0.0,
        attention_dropout=0.0,
        layer_norm_epsilon=1e-12,
        initializer_range=0.02,
        attention="full",
        attention_kwargs=None,
        normalization="layer_norm",
        bottleneck_dim=None,
        num_feedforward_stacks=1,
        causal=False,
        normalize_first=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_normalization(normalization)
        for name, value in (("causal", causal), ("normalize_first", normalize_first)):
            if not isinstance(value, bool):
                raise ValueError(
                    f"`{name}` must be True or False. Received: {name}={value!r}"
                )
        check_positive_int("num_feedforward_stacks", num_feedforward_stacks)
        if bottleneck_dim is not None:
            check_positive_int("bottleneck_dim", bottleneck_dim)
            check_divisible("bottleneck_dim", bottleneck_dim, "num_heads", num_heads)
        check_positive_int("num_heads", num_heads)
        check_positive_int("hidden_dim", hidden_dim)
        check_positive_int("intermediate_dim", intermediate_dim)
        check_divisible("hidden_dim", hidden_dim, "num_heads", num_heads)
        check_rate("dropout", dropout)
        check_rate("attention_dropout", attention_dropout)
        self.plan = sharing_plan(
            num_layers, num_groups, num_inner_repetitions, sharing
        )
        self.num_layers = num_layers
        self.num_heads = num_heads
        self.hidden_dim = hidden_dim
        self.intermediate_dim = intermediate_dim
        self.num_groups = num_groups
        self.num_inner_repetitions = num_inner_repetitions
        self.sharing = sharing
        self.activation = activation
        self.dropout = dropout
        self.attention_dropout = attention_dropout
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range
        self.attention = attention
        self.attention_kwargs = dict(attention_kwargs or {})
        self.normalization = normalization
        self.bottleneck_dim = bottleneck_dim
        self.num_feedforward_stacks = num_feedforward_stacks
        self.causal = causal
        self.normalize_first = normalize_first
        # ALBERT's own blocks unless a MobileBERT option is asked for, so
        # every existing config builds exactly the model it built before.
        self.uses_bottleneck_blocks = (
            normalization != "layer_norm"
            or bottleneck_dim is not None
            or num_feedforward_stacks != 1
        )
        if self.uses_bottleneck_blocks and attention != "full":
            raise ValueError(
                "MobileBERT-style blocks (`normalization`, `bottleneck_dim`, "
                "`num_feedforward_stacks`) use full attention only. Received: "
                f"attention={attention!r}"
            )
        if self.uses_bottleneck_blocks and (causal or normalize_first):
            raise ValueError(
                "`causal` and `normalize_first` need ALBERT's blocks, not "
                "MobileBERT-style ones (`normalization`, `bottleneck_dim`, "
                f"`num_feedforward_stacks`). Received: causal={causal}, "
                f"normalize_first={normalize_first}, normalization="
                f"{normalization!r}, bottleneck_dim={bottleneck_dim}, "
                f"num_feedforward_stacks={num_feedforward_stacks}"
            )

        if self.uses_bottleneck_blocks:
            new_attention, new_feed_forward = bottleneck_sublayer_factories(
                num_heads=num_heads,
                hidden_dim=hidden_dim,
                intermediate_dim=intermediate_dim,
                bottleneck_dim=bottleneck_dim,
                num_feedforward_stacks=num_feedforward_stacks,
                activation=activation,
                normalization=normalization,
                dropout=dropout,
                attention_dropout=attention_dropout,
                layer_norm_epsilon=layer_norm_epsilon,
                initializer_range=initializer_range,
                dtype=self.dtype_policy,
            )
        else:
            new_attention, new_feed_forward = sublayer_factories(
                num_heads=num_heads,
                hidden_dim=hidden_dim,
                intermediate_dim=intermediate_dim,
                activation=activation,
                dropout=dropout,
                attention_dropout=attention_dropout,
                layer_norm_epsilon=layer_norm_epsilon,
                initializer_range=initializer_range,
                attention=attention,
                attention_kwargs=self.attention_kwargs,
                dtype=self.dtype_policy,
                causal=causal,
                normalize_first=normalize_first,
            )
        # GPT-2's pre-LN stack ends with a LayerNorm (`ln_f`).
        self.final_layer_norm = None
        if normalize_first:
            self.final_layer_norm = keras.layers.LayerNormalization(
                epsilon=layer_norm_epsilon,
                dtype=self.dtype_policy,
                name="final_layer_norm",
            )
        # One sublayer per distinct owner, created in first-use order so that
        # weight order is stable across runs.
        self.attention_sublayers = {}
        self.feed_forward_sublayers = {}
        for inner_plan in self.plan:
            for attention_owner, feed_forward_owner in inner_plan:
                if attention_owner not in self.attention_sublayers:
                    self.attention_sublayers[attention_owner] = new_attention(
                        f"{attention_owner}_attention"
                    )
                if feed_forward_owner not in self.feed_forward_sublayers:
                    self.feed_forward_sublayers[feed_forward_owner] = (
                        new_feed_forward(f"{feed_forward_owner}_feed_forward")
                    )

    def build(self, hidden_states_shape, padding_mask_shape=None):
        for sublayer in self.attention_sublayers.values():
            sublayer.build(hidden_states_shape, padding_mask_shape)
        for sublayer in self.feed_forward_sublayers.values():
            if self.uses_bottleneck_blocks:
                narrow = tuple(hidden_states_shape[:-1]) + (sublayer.width,)
                sublayer.build(narrow, hidden_states_shape)
            else:
                sublayer.build(hidden_states_shape)
        if self.final_layer_norm is not None:
            self.final_layer_norm.build(hidden_states_shape)
        self.built = True

    @property
    def num_cached_blocks(self):
        """Blocks run per call (layers x inner repetitions): one key/value
        cache entry each."""
        return self.num_layers * self.num_inner_repetitions

    def _block(self, owners, x, padding_mask, training, return_attention):
        """One block of the plan; returns `(output, probabilities or None)`."""
        attention = self.attention_sublayers[owners[0]]
        feed_forward = self.feed_forward_sublayers[owners[1]]
        probabilities = None
        attended = attention(
            x, padding_mask=padding_mask, training=training,
            return_attention=return_attention,
        )
        if return_attention:
            attended, probabilities = attended
        if self.uses_bottleneck_blocks:
            # The bottleneck feed-forward half adds back the block input.
            return feed_forward(attended, x, training=training), probabilities
        return feed_forward(attended, training=training), probabilities

    def _run(self, hidden_states, padding_mask, training, return_attention):
        outputs, attention = [], []
        x = hidden_states
        for inner_plan in self.plan:
            for owners in inner_plan:
                x, probabilities = self._block(
                    owners, x, padding_mask, training, return_attention
                )
            outputs.append(x)
            # The layer's last inner block stands for the layer.
            attention.append(probabilities)
        outputs[-1] = self._finish(outputs[-1])
        return outputs, attention

    def _finish(self, last_output):
        if self.final_layer_norm is None:
            return last_output
        return self.final_layer_norm(last_output)

    def call_with_cache(self, hidden_states, cache, cache_update_index, padding_mask=None):
        """Runs new positions `hidden_states` [batch, new, hidden] starting
        at `cache_update_index` against a key/value cache.

        `cache` is [batch, num_cached_blocks, 2, max_length, heads,
        head_dim], in the order blocks run. Returns `(sequence_output,
        cache)`, the sequence output of the new positions only.
        """
        caches = []
        x = hidden_states
        for inner_plan in self.plan:
            for attention_owner, feed_forward_owner in inner_plan:
                x, block_cache = self.attention_sublayers[
                    attention_owner
                ].call_with_cache(
                    x, cache[:, len(caches)], cache_update_index,
                    padding_mask=padding_mask,
                )
                caches.append(block_cache)
                x = self.feed_forward_sublayers[feed_forward_owner](x)
        return self._finish(x), ops.stack(caches, axis=1)

    def call(self, hidden_states, padding_mask=None, training=False):
        return self._run(hidden_states, padding_mask, training, False)[0]

    def outputs_and_attention(self, hidden_states, padding_mask=None, training=False):
        """`(outputs, attention)`: every virtual layer's output, as `call`,
        and its attention probabilities [batch, heads, seq, seq] (float32).

        Same weights and results as `call`; use it eagerly or inside a
        traced function on a built encoder (full attention only).
        """
        return self._run(hidden_states, padding_mask, training, True)

    def compute_output_shape(self, hidden_states_shape, padding_mask_shape=None):
        return [tuple(hidden_states_shape)] * self.num_layers

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_layers": self.num_layers,
                "num_heads": self.num_heads,
                "hidden_dim": self.hidden_dim,
                "intermediate_dim": self.intermediate_dim,
                "num_groups": self.num_groups,
                "num_inner_repetitions": self.num_inner_repetitions,
                "sharing": self.sharing,
                "activation": self.activation,
                "dropout": self.dropout,
                "attention_dropout": self.attention_dropout,
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "initializer_range": self.initializer_range,
                "attention": self.attention,
                "attention_kwargs": self.attention_kwargs,
                "normalization": self.normalization,
                "bottleneck_dim": self.bottleneck_dim,
                "num_feedforward_stacks": self.num_feedforward_stacks,
                "causal": self.causal,
                "normalize_first": self.normalize_first,
            }
        )
        return config
