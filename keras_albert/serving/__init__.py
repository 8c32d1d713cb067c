"""TensorFlow-only serving: what each task serves from raw strings, with
tokenization and length bucketing inside the graph (the SavedModel, TF-Hub
and TFLite exporters write these). The core never imports this package;
without TensorFlow, importing it raises a one-line `TensorFlowRequiredError`.
"""

from keras_albert.utils.backend import require_tensorflow

require_tensorflow("keras_albert.serving (raw-string serving graphs)", backend_too=False)
