"""Data preparation: vocabularies, pretraining instances, task readers."""

from keras_albert.data.bucketed_batches import bucketed_dataset
from keras_albert.data.documents import read_documents
from keras_albert.data.pretraining_instances import create_pretraining_instances
from keras_albert.data.pretraining_tfrecords import pretraining_dataset
from keras_albert.data.pretraining_tfrecords import write_pretraining_tfrecords
from keras_albert.data.sentencepiece_training import train_sentencepiece
