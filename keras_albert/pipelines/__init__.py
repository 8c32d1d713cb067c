"""Training pipelines as Python APIs with dataclass settings; the CLI wraps them.

`pretraining.run_pretraining(PretrainingSettings(...))` is what
`python -m keras_albert pretrain` runs; `fine_tune_classifier` is the
recommended classifier recipe.
"""

from keras_albert.pipelines.classifier_fine_tuning import ClassifierRecipe
from keras_albert.pipelines.classifier_fine_tuning import fine_tune_classifier
from keras_albert.pipelines.text_baselines import classification_scores
from keras_albert.pipelines.text_baselines import tfidf_baseline
