"""keras_albert: ALBERT for Keras 3 on TensorFlow."""

import os

# The package is built and tested on the TensorFlow backend only.
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

from keras_albert import layers  # noqa: E402
# keras-hub's namespaces: `keras_hub.models.X` ports as `keras_albert.models.X`.
from keras_albert import models  # noqa: E402
from keras_albert import tokenizers  # noqa: E402
from keras_albert.models.albert_backbone import AlbertBackbone  # noqa: E402
from keras_albert.models.albert_classifier import AlbertClassifier  # noqa: E402
from keras_albert.models.albert_masked_lm import AlbertMaskedLM  # noqa: E402
from keras_albert.models.albert_masked_lm_preprocessor import (  # noqa: E402
    AlbertMaskedLMPreprocessor,
)
from keras_albert.models.albert_multiple_choice import AlbertMultipleChoice  # noqa: E402
from keras_albert.models.albert_multiple_choice_preprocessor import (  # noqa: E402
    AlbertMultipleChoicePreprocessor,
)
from keras_albert.models.albert_presets import OFFICIAL_PRESETS  # noqa: E402
from keras_albert.models.albert_pretrainer import AlbertPretrainer  # noqa: E402
from keras_albert.models.albert_pretrainer import pretraining_batch  # noqa: E402
from keras_albert.models.albert_text_classifier_preprocessor import (  # noqa: E402
    AlbertTextClassifierPreprocessor,
)
from keras_albert.models.albert_token_classifier import AlbertTokenClassifier  # noqa: E402
from keras_albert.models.albert_token_classifier_preprocessor import (  # noqa: E402
    AlbertTokenClassifierPreprocessor,
)
from keras_albert.models.albert_question_answerer import AlbertQuestionAnswerer  # noqa: E402
from keras_albert.models.albert_question_answerer_preprocessor import (  # noqa: E402
    AlbertQuestionAnswererPreprocessor,
)
from keras_albert.models.albert_tokenizer import AlbertTokenizer  # noqa: E402
from keras_albert.models.preset_resolution import list_presets  # noqa: E402
from keras_albert.models.position_extension import extend_positions  # noqa: E402

# Registers the keras-hub preset converter (official presets are published in
# keras-hub's format).
from keras_albert.convert import keras_hub_preset as _keras_hub_preset  # noqa: E402, F401

# keras-hub's names for the classifier and its preprocessor.
from keras_albert.models import AlbertPreprocessor  # noqa: E402
from keras_albert.models import AlbertTextClassifier  # noqa: E402

__version__ = "0.1.0"
