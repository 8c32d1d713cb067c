"""The task model a preset directory holds, whatever its class."""

import json
import pathlib

from keras_albert.models.albert_causal_lm import AlbertCausalLM
from keras_albert.models.albert_classifier import AlbertClassifier
from keras_albert.models.albert_multiple_choice import AlbertMultipleChoice
from keras_albert.models.albert_question_answerer import AlbertQuestionAnswerer
from keras_albert.models.albert_token_classifier import AlbertTokenClassifier

TASK_CLASSES = {
    cls.__name__: cls
    for cls in (AlbertClassifier, AlbertQuestionAnswerer, AlbertMultipleChoice, AlbertTokenClassifier,
                AlbertCausalLM)
}


def load_task(preset):
    """Loads the fine-tuned task saved in `preset` (a directory)."""
    task_file = pathlib.Path(preset) / "task.json"
    if not task_file.is_file():
        raise ValueError(
            f"Preset {str(preset)!r} holds no task (no task.json): export a "
            "fine-tuned model, e.g. the preset/ written by `finetune`."
        )
    try:
        name = json.loads(task_file.read_text())["registered_name"].split(">")[-1]
    except (ValueError, KeyError, AttributeError) as error:
        raise ValueError(f"{str(task_file)!r} is not a task config: {error}") from None
    if name not in TASK_CLASSES:
        raise ValueError(
            f"{str(task_file)!r} holds {name}; a SavedModel or TFLite export takes a fine-tuned task "
            f"(exportable tasks: {', '.join(sorted(TASK_CLASSES))}). Fine-tune it first (`finetune`), or "
            "export its encoder as TF-Hub modules (`export --format=tfhub`)."
        )
    return TASK_CLASSES[name].from_preset(str(preset))
