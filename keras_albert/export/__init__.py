"""Export for serving (SavedModels that take raw strings, TF-Hub, TFLite).

TensorFlow-only: without TensorFlow, importing this package raises a
one-line `TensorFlowRequiredError` that says what to install. Publishing
is `keras_albert.publishing` (it needs TensorFlow only for the exports it
adds, and imports them from here).
"""

from keras_albert.utils.backend import require_tensorflow

require_tensorflow("keras_albert.export (SavedModel, TF-Hub, TFLite)", backend_too=False)

from keras_albert.export.serving_saved_model import export_serving_saved_model  # noqa: F401, E402
from keras_albert.export.fine_tunable_tfsm_layer import FineTunableTFSMLayer  # noqa: F401, E402
from keras_albert.export.tfhub_export import export_tfhub  # noqa: F401, E402
from keras_albert.export.tflite_export import export_tflite  # noqa: F401, E402
