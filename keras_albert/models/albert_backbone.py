"""AlbertBackbone: factorized (or trigram) embedding, shared encoder, pooler."""

import warnings

import keras
from keras_hub.models import Backbone

from keras_albert.layers.factorized_embedding import AlbertFactorizedEmbedding
from keras_albert.layers.heads import AlbertPooler
from keras_albert.layers.reversible_encoder import AlbertReversibleEncoder
from keras_albert.layers.shared_encoder import AlbertEncoder
from keras_albert.layers.trigram_embedding import AlbertTrigramEmbedding
from keras_albert.presets.preset_resolution import PresetResolutionMixin
from keras_albert.utils.native_notices import drop_grain_notices
from keras_albert.utils.validation import check_choice

# Span QA, token classification and masked-LM tasks read only the sequence
# output, so the pooler gets no gradient and Keras warns on every training
# step; nothing a user can act on. Only a warning naming the pooler's two
# variables (`pooled_dense` in keras-hub's backbones) is silenced.
POOLER_WITHOUT_GRADIENT = (
    r"Gradients do not exist for variables "
    r"\['[^']*(?:pooler/dense|pooled_dense)/kernel', "
    r"'[^']*(?:pooler/dense|pooled_dense)/bias'\] "
)
warnings.filterwarnings("ignore", message=POOLER_WITHOUT_GRADIENT)
# grain's notices on every fit of raw texts (see native_notices).
drop_grain_notices()

EMBEDDING_TYPES = ("factorized", "trigram")


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertBackbone(PresetResolutionMixin, Backbone):
    """ALBERT encoder network, with every sharing strategy of the paper.

    Inputs are keras-hub's: `token_ids`, `segment_ids`, `padding_mask`
    (int32 [batch, seq]). Outputs: `sequence_output` [batch, seq, H],
    `pooled_output` [batch, H] (tanh on the first token) and
    `encoder_outputs`, the list of every virtual layer's output.

    BERT is the special case `embedding_dim == hidden_dim`, `sharing="none"`
    (and no projection is needed, but it is kept for one code path).

    Args:
        vocabulary_size: int, V.
        num_layers: int, L, number of virtual layers.
        num_heads: int, divides `hidden_dim`.
        embedding_dim: int, E.
        hidden_dim: int, H.
        intermediate_dim: int, feed-forward width.
        num_groups: int, G <= L; layer `l` uses group `int(l / L * G)`.
        num_inner_repetitions: int, blocks per group, run in order.
        sharing: `"all"`, `"attention"`, `"ffn"` or `"none"`.
        dropout: float, hidden dropout.
        attention_dropout: float or None (None: same as `dropout`).
        max_sequence_length: int, number of learned positions.
        num_segments: int, number of segment ids.
        activation: str, feed-forward activation (`"gelu_approximate"`).
        layer_norm_epsilon: float (1e-12 as Google's release).
        initializer_range: float.
        attention: str, attention layer name: `"full"` or `"lsh"` (Reformer).
        attention_kwargs: dict, extra arguments for the attention layer.
        lsh_num_hashes, lsh_num_buckets, lsh_chunk_length,
        lsh_num_chunks_after, lsh_seed: shortcuts for the LSH layer's
            `num_hashes`, `num_buckets`, `chunk_length`, `num_chunks_after`
            and `seed` (stored in `attention_kwargs`); only with
            `attention="lsh"`.
        normalization: `"layer_norm"` (ALBERT) or `"no_norm"` (MobileBERT's
            element-wise scale and shift), in the embeddings and encoder.
        bottleneck_dim: int or None. With an int B, every block is
            MobileBERT's bottleneck block: H -> B, attention at B with Q and
            K from the bottleneck and V from the block input, B -> H.
        num_feedforward_stacks: int, feed-forward units per block (MobileBERT
            stacks 4).
        embedding_type: `"factorized"` (ALBERT: V x E, then E -> H) or
            `"trigram"` (MobileBERT: V x E, neighbours concatenated, 3E -> H).
        reversible: bool, Reformer's reversible residual blocks (see
            `AlbertReversibleEncoder`): training memory does not grow with
            depth; needs dropout 0. Same weights as the standard encoder.
        causal: bool, each position attends only to itself and earlier
            positions (a GPT-2-style decoder, for `AlbertCausalLM`), under
            every sharing strategy. Needs the factorized embedding and the
            standard encoder.
        normalize_first: bool, GPT-2's pre-LN layout: no embedding
            LayerNorm, `x + sublayer(LayerNorm(x))` blocks and a final
            LayerNorm (what a converted GPT-2 checkpoint needs).
        dtype: dtype or dtype policy.

    The MobileBERT options (`activation="relu"` too) combine with every
    sharing strategy, so a student can be narrow and share its layers.
    Their defaults build exactly ALBERT.

    Example:
    >>> backbone = keras_albert.AlbertBackbone(
    ...     vocabulary_size=100, num_layers=4, num_heads=2, embedding_dim=8,
    ...     hidden_dim=16, intermediate_dim=32, num_groups=2)
    >>> outputs = backbone({
    ...     "token_ids": np.ones((1, 6), "int32"),
    ...     "segment_ids": np.zeros((1, 6), "int32"),
    ...     "padding_mask": np.ones((1, 6), "int32")})
    >>> tuple(outputs["pooled_output"].shape)
    (1, 16)
    """

    def __init__(
        self,
        vocabulary_size,
        num_layers,
        num_heads,
        embedding_dim,
        hidden_dim,
        intermediate_dim,
        num_groups=1,
        num_inner_repetitions=1,
        sharing="all",
        dropout=0.0,
        attention_dropout=None,
        max_sequence_length=512,
        num_segments=2,
        activation="gelu_approximate",
        layer_norm_epsilon=1e-12,
        initializer_range=0.02,
        attention="full",
        attention_kwargs=None,
        lsh_num_hashes=None,
        lsh_num_buckets=None,
        lsh_chunk_length=None,
        lsh_num_chunks_after=None,
        lsh_seed=None,
        normalization="layer_norm",
        bottleneck_dim=None,
        num_feedforward_stacks=1,
        embedding_type="factorized",
        reversible=False,
        causal=False,
        normalize_first=False,
        dtype=None,
        **kwargs,
    ):
        check_choice("embedding_type", embedding_type, EMBEDDING_TYPES)
        if (causal or normalize_first) and (embedding_type != "factorized" or reversible):
            # The trigram embedding reads the next token; the reversible
            # encoder has its own residual layout.
            raise ValueError(
                "`causal` and `normalize_first` need embedding_type='factorized' "
                f"and reversible=False. Received: causal={causal!r}, "
                f"normalize_first={normalize_first!r}, "
                f"embedding_type={embedding_type!r}, reversible={reversible!r}"
            )
        if attention_dropout is None:
            attention_dropout = dropout
        lsh = {
            "num_hashes": lsh_num_hashes,
            "num_buckets": lsh_num_buckets,
            "chunk_length": lsh_chunk_length,
            "num_chunks_after": lsh_num_chunks_after,
            "seed": lsh_seed,
        }
        lsh = {key: value for key, value in lsh.items() if value is not None}
        if lsh and attention != "lsh":
            raise ValueError(
                f"`lsh_*` arguments need attention='lsh'. Received: "
                f"attention={attention!r} with {sorted('lsh_' + k for k in lsh)}"
            )
        attention_kwargs = {**(attention_kwargs or {}), **lsh}

        # === Layers ===
        embedding_cls = (
            AlbertTrigramEmbedding
            if embedding_type == "trigram"
            else AlbertFactorizedEmbedding
        )
        embedding_kwargs = {}
        if normalization != "layer_norm" or embedding_type != "factorized":
            embedding_kwargs["normalization"] = normalization
        if normalize_first:
            embedding_kwargs["normalize"] = False
        self.embeddings = embedding_cls(
            vocabulary_size=vocabulary_size,
            embedding_dim=embedding_dim,
            hidden_dim=hidden_dim,
            max_sequence_length=max_sequence_length,
            num_segments=num_segments,
            dropout=dropout,
            layer_norm_epsilon=layer_norm_epsilon,
            initializer_range=initializer_range,
            dtype=dtype,
            name="embeddings",
            **embedding_kwargs,
        )
        encoder_cls = AlbertReversibleEncoder if reversible else AlbertEncoder
        self.encoder = encoder_cls(
            num_layers=num_layers,
            num_heads=num_heads,
            hidden_dim=hidden_dim,
            intermediate_dim=intermediate_dim,
            num_groups=num_groups,
            num_inner_repetitions=num_inner_repetitions,
            sharing=sharing,
            activation=activation,
            dropout=dropout,
            attention_dropout=attention_dropout,
            layer_norm_epsilon=layer_norm_epsilon,
            initializer_range=initializer_range,
            attention=attention,
            attention_kwargs=attention_kwargs,
            normalization=normalization,
            bottleneck_dim=bottleneck_dim,
            num_feedforward_stacks=num_feedforward_stacks,
            dtype=dtype,
            name="encoder",
            **(
                {"causal": causal, "normalize_first": normalize_first}
                if causal or normalize_first
                else {}
            ),
        )
        self.pooler = AlbertPooler(
            hidden_dim,
            initializer_range=initializer_range,
            dtype=dtype,
            name="pooler",
        )

        # === Functional model ===
        token_ids = keras.Input(shape=(None,), dtype="int32", name="token_ids")
        segment_ids = keras.Input(
            shape=(None,), dtype="int32", name="segment_ids"
        )
        padding_mask = keras.Input(
            shape=(None,), dtype="int32", name="padding_mask"
        )
        x = self._embed(token_ids, segment_ids, padding_mask)
        encoder_outputs = self.encoder(x, padding_mask=padding_mask)
        sequence_output = encoder_outputs[-1]
        pooled_output = self.pooler(sequence_output)
        super().__init__(
            inputs={
                "token_ids": token_ids,
                "segment_ids": segment_ids,
                "padding_mask": padding_mask,
            },
            outputs={
                "sequence_output": sequence_output,
                "pooled_output": pooled_output,
                "encoder_outputs": encoder_outputs,
            },
            dtype=dtype,
            **kwargs,
        )

        # === Config ===
        self.vocabulary_size = vocabulary_size
        self.num_layers = num_layers
        self.num_heads = num_heads
        self.embedding_dim = embedding_dim
        self.hidden_dim = hidden_dim
        self.intermediate_dim = intermediate_dim
        self.num_groups = num_groups
        self.num_inner_repetitions = num_inner_repetitions
        self.sharing = sharing
        self.dropout = dropout
        self.attention_dropout = attention_dropout
        self.max_sequence_length = max_sequence_length
        self.num_segments = num_segments
        self.activation = activation
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range
        self.attention = attention
        self.attention_kwargs = dict(attention_kwargs or {})
        self.normalization = normalization
        self.bottleneck_dim = bottleneck_dim
        self.num_feedforward_stacks = num_feedforward_stacks
        self.embedding_type = embedding_type
        self.reversible = reversible
        self.causal = causal
        self.normalize_first = normalize_first

    def distillation_outputs(self, inputs, training=False):
        """Every intermediate a distiller compares, with the same weights.

        Returns a dict: `embedding_output` [batch, seq, H],
        `encoder_outputs` (list over virtual layers of [batch, seq, H]),
        `attention_probabilities` (list over virtual layers of [batch,
        heads, seq, seq], float32) and `sequence_output`. The model's
        normal outputs are untouched; this runs the same layers again.
        """
        embedded = self._embed(
            inputs["token_ids"],
            inputs["segment_ids"],
            inputs["padding_mask"],
            training=training,
        )
        outputs, attention = self.encoder.outputs_and_attention(
            embedded, padding_mask=inputs["padding_mask"], training=training
        )
        return {
            "embedding_output": embedded,
            "encoder_outputs": outputs,
            "attention_probabilities": attention,
            "sequence_output": outputs[-1],
        }

    def _embed(self, token_ids, segment_ids, padding_mask, training=None):
        # The trigram embedding reads each token's neighbours, so it needs
        # to know which of them are padding; the factorized one does not.
        if isinstance(self.embeddings, AlbertTrigramEmbedding):
            return self.embeddings(
                token_ids, segment_ids, padding_mask=padding_mask, training=training
            )
        return self.embeddings(token_ids, segment_ids, training=training)

    @property
    def token_embedding(self):
        """The V x E word embedding layer (tied by the masked-LM head)."""
        return self.embeddings.token_embedding

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocabulary_size": self.vocabulary_size,
                "num_layers": self.num_layers,
                "num_heads": self.num_heads,
                "embedding_dim": self.embedding_dim,
                "hidden_dim": self.hidden_dim,
                "intermediate_dim": self.intermediate_dim,
                "num_groups": self.num_groups,
                "num_inner_repetitions": self.num_inner_repetitions,
                "sharing": self.sharing,
                "dropout": self.dropout,
                "attention_dropout": self.attention_dropout,
                "max_sequence_length": self.max_sequence_length,
                "num_segments": self.num_segments,
                "activation": self.activation,
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "initializer_range": self.initializer_range,
                "attention": self.attention,
                "attention_kwargs": self.attention_kwargs,
                "normalization": self.normalization,
                "bottleneck_dim": self.bottleneck_dim,
                "num_feedforward_stacks": self.num_feedforward_stacks,
                "embedding_type": self.embedding_type,
                "reversible": self.reversible,
                "causal": self.causal,
                "normalize_first": self.normalize_first,
            }
        )
        return config
