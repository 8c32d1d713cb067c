"""Bundled real corpora (package data) and their loaders; no network."""

from keras_albert.datasets.austen import AUSTEN_NOVELS
from keras_albert.datasets.austen import HELD_OUT_NOVEL
from keras_albert.datasets.austen import load_austen_chapters
from keras_albert.datasets.austen import load_austen_documents
from keras_albert.datasets.austen import load_austen_novel
from keras_albert.datasets.austen import split_sentences
from keras_albert.datasets.long_documents import build_long_document_task
from keras_albert.datasets.long_documents import split_chapters
from keras_albert.datasets.wordnet_supersense import load_supersense
from keras_albert.datasets.wordnet_supersense import load_wordnet_synsets
from keras_albert.datasets.wordnet_supersense import split_of
from keras_albert.datasets.wordnet_supersense import supersense_dataset
from keras_albert.datasets.wordnet_supersense import supersense_held_out_sample
from keras_albert.datasets.wordnet_supersense import supersense_labels
from keras_albert.datasets.wordnet_supersense import supersense_split_sample
