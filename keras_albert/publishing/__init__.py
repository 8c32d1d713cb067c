"""Publishing: a preset, its model card and its exports in one directory a
model hub takes whole, uploaded to Kaggle or Hugging Face.

Runs on every Keras backend and without TensorFlow; only the exports it
adds (the serving SavedModel, TF-Hub modules) need TensorFlow, and asking
for them without it says so in one line.
"""

from keras_albert.publishing.publisher import publish_preset  # noqa: F401
from keras_albert.publishing.publisher import upload_published  # noqa: F401
