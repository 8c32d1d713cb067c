"""Mirrors `keras_hub.tokenizers` for ALBERT: `keras_hub.tokenizers.AlbertTokenizer`
becomes `keras_albert.tokenizers.AlbertTokenizer`."""

from keras_albert.models.albert_tokenizer import AlbertTokenizer
