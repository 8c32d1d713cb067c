"""Export and publishing never destroy what the user put there.

A SavedModel directory given notes and a warm-up file, a published folder
given notes and a .git, then the same command run again: the user's files
stay, and publishing never uploads them.

TensorFlow only (export and publishing are TensorFlow's): each command runs
on the TensorFlow backend whatever this run's backend (in this process on
TensorFlow, else in a TensorFlow process), on a preset saved on this run's
backend; skipped only where TensorFlow is not installed:
    python -m pytest tests/hardening/test_export_output_ownership.py
"""

import fnmatch
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import keras
import pytest

pytest.importorskip("tensorflow", reason="export and publishing are TensorFlow's")

from keras_albert.utils import atomic_directory as atomic  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _on_tensorflow(*arguments):
    """`python ARGUMENTS` with KERAS_BACKEND=tensorflow; its stdout."""
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    result = subprocess.run(
        [sys.executable, *arguments], capture_output=True, text=True, timeout=600, env=env, cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def _export(arguments):
    """`python -m keras_albert export ARGUMENTS` on TensorFlow: `main` in
    this process when its backend is TensorFlow (a process costs seconds of
    import), else a TensorFlow process."""
    if keras.config.backend() != "tensorflow":
        _on_tensorflow("-m", "keras_albert", "export", *arguments)
        return
    from keras_albert.cli.main import main

    assert main(["export", *arguments]) == 0


def _tree(directory):
    return sorted(
        str(p.relative_to(directory)) for p in directory.rglob("*") if not p.is_dir()
    )


@pytest.mark.large
@pytest.mark.entry_point("outputs")
def test_export_saved_model_again_keeps_what_the_user_added(classifier_preset, tmp_path):
    out = tmp_path / "serving"
    arguments = [f"--preset={classifier_preset}", "--format=saved_model", f"--output={out}"]
    _export(arguments)
    (out / "assets.extra").mkdir()
    (out / "assets.extra" / "tf_serving_warmup_requests").write_bytes(b"warmup")
    (out / "DEPLOY.md").write_text("kubectl apply ...")
    _export(arguments)
    assert (out / "assets.extra" / "tf_serving_warmup_requests").read_bytes() == b"warmup"
    assert (out / "DEPLOY.md").read_text() == "kubectl apply ..."
    assert (out / "saved_model.pb").exists()


def published(preset, out):
    """Publishes `preset` to `out`: the files written and the patterns the
    upload leaves out."""
    from keras_albert.publishing import hub_upload
    from keras_albert.publishing.publisher import publish_preset

    result = publish_preset(preset, out, label_names=["a", "b", "c"], exports=())
    return dict(files=result["files"], not_uploaded=hub_upload.not_uploaded(out))


# `published` in a TensorFlow process, for a run on another backend.
_PUBLISH = textwrap.dedent(
    """
    import json
    import sys

    from tests.hardening.test_export_output_ownership import published

    print(json.dumps(published(sys.argv[1], sys.argv[2])))
    """
)


def _publish(preset, out):
    if keras.config.backend() == "tensorflow":
        return published(str(preset), str(out))
    return json.loads(_on_tensorflow("-c", _PUBLISH, str(preset), str(out)).strip().splitlines()[-1])


@pytest.mark.large
@pytest.mark.entry_point("outputs")
def test_publish_again_keeps_what_the_user_added_and_never_uploads_it(classifier_preset, tmp_path):
    out = tmp_path / "published"
    _publish(classifier_preset, out)
    (out / "NOTES.md").write_text("private notes")
    (out / ".git").mkdir()
    (out / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    result = _publish(classifier_preset, out)
    assert (out / "NOTES.md").read_text() == "private notes"
    assert (out / ".git" / "HEAD").exists()
    assert "NOTES.md" in result["files"]
    card = (out / "README.md").read_text()
    assert "NOTES.md" not in card and ".git" not in card
    patterns = result["not_uploaded"]
    sent = [f for f in _tree(out) if not any(fnmatch.fnmatch(f, p) for p in patterns)]
    assert "README.md" in sent and "config.json" in sent
    assert not [f for f in sent if f.startswith((".git", "NOTES", atomic.MARKER_FILE))]
