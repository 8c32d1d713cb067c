"""Export for serving: SavedModels that take raw strings."""

from keras_albert.export.serving_saved_model import export_serving_saved_model  # noqa: F401
