"""The order `make test` hands test files to its two xdist workers.

With `--dist loadfile` a worker takes the next file whenever it is nearly
idle, so the run ends when the last file handed out ends. xdist's default
order (most tests first) handed out last the files that hold a few tests
of minutes each: at 219b546 the slowest (README.md's shell walk, 6 min
alone) came near the end while the other worker had run out of files.
Longest first, then the rest in collection order, lets the many short
files even the two workers out at the end. Each file is named with its
seconds at 219b546 (`--durations`, this machine on a slow day); the list
needs no exact figures, only the big files early.
"""

SLOW_FILES_FIRST = (
    "tests/test_readme_blocks.py",  # 428 s
    "tests/backends/test_pretrain_without_tensorflow.py",  # 235
    "tests/backends/test_causal_lm_backends.py",  # 185
    "tests/pipelines/test_causal_pretraining.py",  # 169
    "tests/examples/test_long_document_benchmark.py",  # 164
    "tests/cli/test_finetune_command.py",  # 148
    "tests/cli/test_pretrain_command.py",  # 146
    "tests/pipelines/test_finetuning.py",  # 138
    "tests/backends/test_finetune_without_tensorflow.py",  # 120
    "tests/examples/test_transfer_benchmark.py",  # 120
    "tests/tools/test_gpu_pretraining.py",  # 117
    "tests/hardening/test_kill_during_write.py",  # 117
    "tests/backends/test_backend_parity.py",  # 117
    "tests/examples/test_quickstart.py",  # 113
    "tests/pipelines/test_long_document_pipeline.py",  # 104
    "tests/test_readme_blocks_on_jax.py",  # 103
    "tests/backends/test_resume_on_every_backend.py",  # 86
    "tests/examples/test_causal_generation.py",  # 79
    "tests/models/test_albert_pretrainer.py",  # 70
    "tests/pipelines/test_candidate_progress.py",  # 69
    "tests/utils/test_native_notices.py",  # 68
    "tests/cli/test_finetune_serving_and_tfds.py",  # 68
    "tests/export/test_serving_saved_model.py",  # 62
    "tests/examples/test_long_document_step_times.py",  # 57
    "tests/export/test_tflite_clients.py",  # 56
    "tests/models/test_bundled_preset_transfer.py",  # 54
    "tests/examples/test_task_models.py",  # 54
    "tests/pipelines/test_evaluating.py",  # 49
    "tests/export/test_int8_student.py",  # 48
    "tests/training/test_distributed_pretraining.py",  # 48
    "tests/backends/test_distribution.py",  # 45
)


def file_of(item):
    return item.nodeid.split("::")[0]


def slow_files_first(items):
    """Sorts `items` in place: the files of `SLOW_FILES_FIRST` in its order,
    then every other file in the order collected; a file's tests keep
    their order."""
    rank = {name: index for index, name in enumerate(SLOW_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(file_of(item), len(rank)))
