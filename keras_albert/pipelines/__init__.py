"""Training pipelines as Python APIs with dataclass settings; the CLI wraps them.

`run_pretraining(PretrainingSettings(...))`, `run_finetuning(FinetuneSettings
(...))` and `run_distillation(DistillationSettings(...))` are what
`python -m keras_albert pretrain`, `finetune` and `distill` run;
`fine_tune_classifier` is the recommended classifier recipe;
`run_long_document_row` fine-tunes and scores one model on the long-document
task (`benchmarks/long_document_quality.py` runs the comparison).

Names are imported on first use: the settings modules import nothing heavy,
and the CLI reads them to build its flags without importing TensorFlow.
"""

from keras_albert.utils.lazy_exports import lazy_exports

_EXPORTS = {
    "ClassifierRecipe": "classifier_recipe",
    "recommended_learning_rate": "classifier_recipe",
    "fine_tune_classifier": "classifier_fine_tuning",
    "classification_scores": "text_baselines",
    "tfidf_baseline": "text_baselines",
    "tuned_tfidf_baseline": "text_baselines",
    "majority_baseline": "text_baselines",
    "LongDocumentSettings": "long_documents",
    "long_document_task": "long_documents",
    "run_long_document_row": "long_documents",
    "tfidf_long_document_row": "long_documents",
    "PretrainingSettings": "pretraining_settings",
    "run_pretraining": "pretraining",
    "FinetuneSettings": "finetuning_settings",
    "FINETUNING_TASKS": "finetuning_settings",
    "run_finetuning": "finetuning",
    "make_task": "finetuning_tasks",
    "DistillationSettings": "distillation_settings",
    "run_distillation": "distillation",
    "GenerateSettings": "generation_settings",
    "generate_texts": "generation",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
