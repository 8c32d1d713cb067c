"""Runs one write (a preset save, an export, a conversion) and pauses at a
chosen point of `atomic_directory` so the test can SIGKILL it there.

    python kill_during_write.py OPERATION POINT TARGET [SOURCE]

OPERATION: save (a tiny backbone preset, 2 layers), export (serving
SavedModel of the preset SOURCE), convert (SOURCE preset -> Hugging Face).
POINT: where to pause, printing "PAUSED" and sleeping:
  staged          the new directory is complete, nothing swapped yet
  exchange        just before renameat2 swaps the directories
  between_renames the fallback swap (no renameat2): old moved aside, new not in
  before_cleanup  the new directory is in place, the old one not yet removed
  none            no pause: run to the end

`write(OPERATION, TARGET, SOURCE)` is the write alone, which the test runs
in its own process where no kill is wanted.
"""

import os
import shutil
import sys
import time
import types

from keras_albert.utils import atomic_directory as atomic


def write(operation, target, source=None):
    """The write, to the end; the convert command's exit status (0 for
    the others)."""
    if operation == "save":
        import keras_albert

        keras_albert.AlbertBackbone(
            vocabulary_size=60, num_layers=2, num_heads=2, embedding_dim=8,
            hidden_dim=16, intermediate_dim=32, max_sequence_length=16,
        ).save_to_preset(target)
    elif operation == "export":
        from keras_albert.export.serving_saved_model import export_serving_saved_model
        from keras_albert.publishing.task_loading import load_task

        export_serving_saved_model(load_task(source), target)
    elif operation == "convert":
        from keras_albert.cli.main import main

        return main(["convert", "--from=keras_albert", "--to=hf", f"--src={source}", f"--dst={target}"])
    else:
        raise SystemExit(f"unknown operation {operation!r}")
    return 0


def pause():
    print("PAUSED", flush=True)
    time.sleep(600)


if __name__ == "__main__":
    operation, point, target = sys.argv[1:4]
    source = sys.argv[4] if len(sys.argv) > 4 else None

    if point == "staged":
        original_marker = atomic._write_marker

        def _write_marker(*args):
            original_marker(*args)
            pause()

        atomic._write_marker = _write_marker
    elif point == "exchange":
        def _exchange(a, b):
            pause()

        atomic._exchange = _exchange
    elif point == "between_renames":
        atomic._exchange = lambda a, b: False
        original_rename = os.rename

        def rename(src, dst, *args, **kwargs):
            if ".partial." in os.fspath(src) and os.fspath(dst) == os.fspath(target):
                pause()
            return original_rename(src, dst, *args, **kwargs)

        os.rename = rename
    elif point == "before_cleanup":
        original_rmtree = shutil.rmtree

        def rmtree(path, *args, **kwargs):
            # After the exchange the staging name holds the old directory.
            if ".partial." in os.fspath(path) and os.path.isdir(target):
                pause()
            return original_rmtree(path, *args, **kwargs)

        proxy = types.ModuleType("shutil")
        proxy.__dict__.update(vars(shutil))
        proxy.rmtree = rmtree
        atomic.shutil = proxy
    elif point != "none":
        raise SystemExit(f"unknown point {point!r}")

    status = write(operation, target, source)
    if status:
        sys.exit(status)
    print("DONE", flush=True)
