"""The names `import keras_albert` exposes, imported in one place.

`keras_albert/__init__.py` imports this module, except while
`python -m keras_albert` starts (see there); the CLI imports it before a
command runs, so commands see the same registered classes and converters.
"""

from keras_albert import layers  # noqa: F401
# keras-hub's namespaces: `keras_hub.models.X` ports as `keras_albert.models.X`.
from keras_albert import models  # noqa: F401
from keras_albert import tokenizers  # noqa: F401
from keras_albert.models.albert_backbone import AlbertBackbone  # noqa: F401
from keras_albert.models.albert_causal_lm import AlbertCausalLM  # noqa: F401
from keras_albert.models.albert_causal_lm_preprocessor import (  # noqa: F401
    AlbertCausalLMPreprocessor,
)
from keras_albert.models.albert_classifier import AlbertClassifier  # noqa: F401
from keras_albert.models.albert_masked_lm import AlbertMaskedLM  # noqa: F401
from keras_albert.models.albert_masked_lm_preprocessor import (  # noqa: F401
    AlbertMaskedLMPreprocessor,
)
from keras_albert.models.albert_multiple_choice import AlbertMultipleChoice  # noqa: F401
from keras_albert.models.albert_multiple_choice_preprocessor import (  # noqa: F401
    AlbertMultipleChoicePreprocessor,
)
from keras_albert.models.albert_presets import OFFICIAL_PRESETS  # noqa: F401
from keras_albert.models.albert_pretrainer import AlbertPretrainer  # noqa: F401
from keras_albert.models.albert_pretrainer import pretraining_batch  # noqa: F401
from keras_albert.models.albert_text_classifier_preprocessor import (  # noqa: F401
    AlbertTextClassifierPreprocessor,
)
from keras_albert.models.albert_token_classifier import AlbertTokenClassifier  # noqa: F401
from keras_albert.models.albert_token_classifier_preprocessor import (  # noqa: F401
    AlbertTokenClassifierPreprocessor,
)
from keras_albert.models.albert_question_answerer import AlbertQuestionAnswerer  # noqa: F401
from keras_albert.models.albert_question_answerer_preprocessor import (  # noqa: F401
    AlbertQuestionAnswererPreprocessor,
)
from keras_albert.models.albert_tokenizer import AlbertTokenizer  # noqa: F401
from keras_albert.presets.preset_resolution import list_presets  # noqa: F401
from keras_albert.editing.position_extension import extend_positions  # noqa: F401
from keras_albert.editing.layer_groups import with_layer_groups  # noqa: F401

# Registers the keras-hub preset converter (official presets are published in
# keras-hub's format).
from keras_albert.convert import keras_hub_preset as _keras_hub_preset  # noqa: F401

# keras-hub's names for the classifier and its preprocessor.
from keras_albert.models import AlbertPreprocessor  # noqa: F401
from keras_albert.models import AlbertTextClassifier  # noqa: F401
