"""What `run_finetuning` takes; imports nothing heavy, so the CLI can read
the defaults for its flags without importing TensorFlow."""

import dataclasses

FINETUNING_TASKS = ("classification", "regression", "squad", "multiple_choice", "token_classification")


@dataclasses.dataclass
class FinetuneSettings:
    """Everything `python -m keras_albert finetune` takes (see its --help).

    Example:

    ```python
    from keras_albert.pipelines import FinetuneSettings, run_finetuning

    metrics = run_finetuning(FinetuneSettings(
        preset="albert_tiny_en", task="classification",
        train="train.tsv", eval="dev.tsv", output="runs/my_task"))
    print(metrics["best"])
    ```
    """

    preset: str
    task: str
    # Files, or directories for GLUE and RACE, or split names with `tfds`.
    train: str
    eval: str
    # Gets metrics.json, curves.png, preset/, serving/ and logs/.
    output: str
    glue_task: str = None
    tfds: str = None
    tfds_data_dir: str = None
    # One column, or two for text pairs.
    text_columns: tuple = ("text",)
    label_column: str = "label"
    sequence_length: int = 128
    # classification / regression: the head on the pooled [CLS] ("cls") or
    # on the tokens' mean ("mean"), as `AlbertClassifier(pooling=)`.
    pooling: str = "cls"
    # squad: pieces between window starts.
    doc_stride: int = 128
    epochs: int = 3
    batch_size: int = 32
    learning_rate: float = 5e-5
    warmup_fraction: float = 0.1
    strategy: str = "auto"
    seed: int = 0
    # Task distillation (classification): a classifier preset fine-tuned on
    # the same labels, and unlabelled texts that only the teacher labels.
    teacher: str = None
    transfer_texts: str = None
    distill_temperature: float = 2.0
    distill_alpha: float = 0.5
    # TensorBoard logs in OUTPUT/logs (training and evaluation per epoch).
    tensorboard: bool = True
