"""Export and publishing never destroy what the user put there.

A SavedModel directory given notes and a warm-up file, a published folder
given notes and a .git, then the same command run again: the user's files
stay, and publishing never uploads them.

TensorFlow only (export and publishing are TensorFlow's): each command runs
on the TensorFlow backend whatever this run's backend (`tests.in_process.
on_tensorflow`: in this process on TensorFlow, else in a TensorFlow
process), on a preset saved on this run's backend; skipped only where
TensorFlow is not installed:
    python -m pytest tests/hardening/test_export_output_ownership.py
"""

import fnmatch

import pytest

pytest.importorskip("tensorflow", reason="export and publishing are TensorFlow's")

from keras_albert.utils import atomic_directory as atomic  # noqa: E402
from tests.in_process import on_tensorflow  # noqa: E402


def exported(preset, out):
    """`python -m keras_albert export` of `preset` as a SavedModel to `out`:
    the exit status."""
    from keras_albert.cli.main import main

    return main(["export", f"--preset={preset}", "--format=saved_model", f"--output={out}"])


def _tree(directory):
    return sorted(
        str(p.relative_to(directory)) for p in directory.rglob("*") if not p.is_dir()
    )


@pytest.mark.large
@pytest.mark.entry_point("outputs")
def test_export_saved_model_again_keeps_what_the_user_added(classifier_preset, tmp_path):
    out = tmp_path / "serving"
    assert on_tensorflow(exported, classifier_preset, out) == 0
    (out / "assets.extra").mkdir()
    (out / "assets.extra" / "tf_serving_warmup_requests").write_bytes(b"warmup")
    (out / "DEPLOY.md").write_text("kubectl apply ...")
    assert on_tensorflow(exported, classifier_preset, out) == 0
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


@pytest.mark.large
@pytest.mark.entry_point("outputs")
def test_publish_again_keeps_what_the_user_added_and_never_uploads_it(classifier_preset, tmp_path):
    out = tmp_path / "published"
    on_tensorflow(published, classifier_preset, out)
    (out / "NOTES.md").write_text("private notes")
    (out / ".git").mkdir()
    (out / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    result = on_tensorflow(published, classifier_preset, out)
    assert (out / "NOTES.md").read_text() == "private notes"
    assert (out / ".git" / "HEAD").exists()
    assert "NOTES.md" in result["files"]
    card = (out / "README.md").read_text()
    assert "NOTES.md" not in card and ".git" not in card
    patterns = result["not_uploaded"]
    sent = [f for f in _tree(out) if not any(fnmatch.fnmatch(f, p) for p in patterns)]
    assert "README.md" in sent and "config.json" in sent
    assert not [f for f in sent if f.startswith((".git", "NOTES", atomic.MARKER_FILE))]
