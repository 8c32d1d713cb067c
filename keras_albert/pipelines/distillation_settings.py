"""What `run_distillation` takes; imports nothing heavy, so the CLI can read
the defaults for its flags without importing TensorFlow."""

import dataclasses


@dataclasses.dataclass
class DistillationSettings:
    """Everything `python -m keras_albert distill` takes (see its --help).

    Example:

    ```python
    from keras_albert.pipelines import DistillationSettings, run_distillation

    results = run_distillation(DistillationSettings(
        teacher="albert_tiny_en", corpus=["books.txt"], output="runs/student",
        student_config={"num_layers": 4, "hidden_dim": 128, "num_heads": 2}))
    print(results["preset"])
    ```
    """

    # Teacher preset name or directory (with an MLM head).
    teacher: str
    # A dict, inline JSON object or JSON file of AlbertBackbone arguments
    # (vocabulary_size and max_sequence_length default to the teacher's).
    student_config: object
    # Text files or glob patterns: one sentence per line, a blank line
    # between documents.
    corpus: list
    # Gets data/, preset/, metrics.json and logs/.
    output: str
    # Steps of the final, whole-student stage.
    train_steps: int = 2000
    # Progressive transfer: steps per mapped layer before the final stage
    # (0: off).
    steps_per_stage: int = 0
    batch_size: int = 32
    sequence_length: int = 128
    max_predictions_per_seq: int = 20
    dupe_factor: int = 5
    learning_rate: float = 1e-3
    # Default: a tenth of each stage.
    warmup_steps: int = None
    # {student_layer: teacher_layer} (0-based), as a dict or a JSON object;
    # None spreads the student's layers evenly over the teacher's.
    layer_map: object = None
    feature_weight: float = 1.0
    attention_weight: float = 1.0
    mlm_weight: float = 1.0
    # Weight of the teacher's soft predictions.
    alpha: float = 0.5
    temperature: float = 1.0
    # Instances held for shuffling (cover the data if it fits in memory).
    shuffle_buffer_size: int = 50000
    # Steps between progress lines (and TensorBoard points).
    log_every: int = 100
    # Where the instances are written or reused (default OUTPUT/data):
    # TFRecords on TensorFlow, a NumPy .npz file on JAX and PyTorch.
    data_dir: str = None
    # None: the backend's default (`default_pretraining_jit_compile`).
    jit_compile: bool = None
    strategy: str = "auto"
    seed: int = 0
    # TensorBoard logs in OUTPUT/logs, one directory per stage.
    tensorboard: bool = True
