"""Pure Keras layers for ALBERT (keras.ops only)."""

from keras_albert.layers.activations import gelu_approximate
from keras_albert.layers.attention_registry import register_attention
from keras_albert.layers.factorized_embedding import AlbertFactorizedEmbedding
from keras_albert.layers.heads import AlbertMaskedLMHead
from keras_albert.layers.heads import AlbertPooler
from keras_albert.layers.heads import AlbertSentenceOrderHead
from keras_albert.layers.lsh_attention import AlbertLSHSelfAttention
from keras_albert.layers.self_attention import AlbertSelfAttention
from keras_albert.layers.shared_encoder import AlbertEncoder
from keras_albert.layers.sharing import SHARING_STRATEGIES
from keras_albert.layers.sharing import group_for_layer
from keras_albert.layers.transformer_block import AlbertTransformerBlock
from keras_albert.layers.transformer_sublayers import AlbertAttentionSublayer
from keras_albert.layers.transformer_sublayers import AlbertFeedForwardSublayer
