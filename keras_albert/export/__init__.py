"""Export for serving (SavedModels that take raw strings, TF-Hub, TFLite) and publishing."""

from keras_albert.export.serving_saved_model import export_serving_saved_model  # noqa: F401
from keras_albert.export.fine_tunable_tfsm_layer import FineTunableTFSMLayer  # noqa: F401
from keras_albert.export.tfhub_export import export_tfhub  # noqa: F401
from keras_albert.export.tflite_export import export_tflite  # noqa: F401
from keras_albert.export.publishing import publish_preset  # noqa: F401
from keras_albert.export.publishing import upload_published  # noqa: F401
