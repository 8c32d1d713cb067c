"""keras-hub roles for ALBERT: backbone, tokenizer, preprocessors, tasks.

The names mirror `keras_hub.models` so code written for keras-hub ports by
changing the import: `keras_hub.models.AlbertTextClassifier` becomes
`keras_albert.models.AlbertTextClassifier` (our `AlbertClassifier`).
Importing any module of this package registers our presets, so
`AlbertBackbone.presets` and every task's `presets` list them.
"""

from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_causal_lm import AlbertCausalLM
from keras_albert.models.albert_causal_lm_preprocessor import AlbertCausalLMPreprocessor
from keras_albert.models.albert_classifier import AlbertClassifier
from keras_albert.models.albert_masked_lm import AlbertMaskedLM
from keras_albert.models.albert_masked_lm_preprocessor import AlbertMaskedLMPreprocessor
from keras_albert.models.albert_multiple_choice import AlbertMultipleChoice
from keras_albert.models.albert_multiple_choice_preprocessor import (
    AlbertMultipleChoicePreprocessor,
)
from keras_albert.models.albert_pretrainer import AlbertPretrainer
from keras_albert.models.albert_question_answerer import AlbertQuestionAnswerer
from keras_albert.models.albert_question_answerer_preprocessor import (
    AlbertQuestionAnswererPreprocessor,
)
from keras_albert.models.albert_text_classifier_preprocessor import (
    AlbertTextClassifierPreprocessor,
)
from keras_albert.models.albert_token_classifier import AlbertTokenClassifier
from keras_albert.models.albert_token_classifier_preprocessor import (
    AlbertTokenClassifierPreprocessor,
)
from keras_albert.models.albert_tokenizer import AlbertTokenizer
from keras_albert.models.preset_registry import register_albert_presets

# keras-hub's names for the same classes (`keras_hub.models` exports both
# the current and the older spelling).
AlbertTextClassifier = AlbertClassifier
AlbertPreprocessor = AlbertTextClassifierPreprocessor

register_albert_presets(AlbertBackbone)
