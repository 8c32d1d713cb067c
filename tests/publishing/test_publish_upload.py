"""Publishing with a handle: handles checked before any work, the upload
(only the network calls are replaced), offline and failed uploads that
leave the complete directory and claim nothing."""

import huggingface_hub
import kagglehub
import pytest

import keras_albert
from keras_albert.publishing import hub_upload
from keras_albert.publishing import publisher as publishing
from keras_albert.publishing.hub_upload import UploadError
from keras_albert.publishing.hub_upload import check_handle
from keras_albert.publishing.publisher import publish_preset
from keras_albert.publishing.publisher import upload_published
from keras_albert.utils.atomic_directory import MARKER_FILE

SUPERSENSE = "albert_tiny_en_student_supersense"
KAGGLE = "kaggle://me/albert-supersense/keras/tiny_student"


@pytest.fixture
def online(monkeypatch):
    """The reachability probe says the host answers."""
    monkeypatch.setattr(hub_upload, "network_available", lambda host: True)


@pytest.fixture
def kaggle_calls(monkeypatch):
    """kagglehub.model_upload, recorded: what it would have sent."""
    calls = []

    def model_upload(handle, local_model_dir, license_name=None, version_notes="", ignore_patterns=None):
        calls.append(dict(handle=handle, directory=local_model_dir, license_name=license_name,
                          version_notes=version_notes, ignore_patterns=ignore_patterns))

    monkeypatch.setattr(kagglehub, "model_upload", model_upload)
    return calls


@pytest.mark.parametrize("handle,message", [
    ("s3://bucket/model", "unknown scheme"),
    ("me/albert/keras/tiny", "unknown scheme"),
    ("kaggle://me/albert/keras", "has 3 parts after kaggle://, not 4"),
    ("kaggle://me/albert/keras/tiny/3", "names a version"),
    ("kaggle://me/albert/pytorch/tiny", "names the framework 'pytorch'"),
    ("kaggle://me//keras/tiny", "empty or invalid parts"),
    ("hf://me/albert/extra", "has 3 parts after hf://"),
    ("hf://", "empty or invalid parts"),
    (None, "must be a string"),
])
def test_unknown_handles_are_refused_before_any_work(tmp_path, monkeypatch, handle, message):
    def refuse(*args, **kwargs):
        raise AssertionError("work started before the handle was checked")

    monkeypatch.setattr(publishing, "resolve_preset", refuse)
    with pytest.raises(ValueError, match=message) as error:
        publish_preset(SUPERSENSE, tmp_path / "published", handle=handle or 3)
    assert repr(handle or 3) in str(error.value)
    assert "kaggle://OWNER/MODEL/keras/VARIATION" in str(error.value) and "hf://OWNER/NAME" in str(error.value)
    assert not (tmp_path / "published").exists()


def test_accepted_handles():
    assert check_handle(KAGGLE) == ("kaggle", "me/albert-supersense/keras/tiny_student")
    assert check_handle("hf://albert-tiny") == ("hf", "albert-tiny")


def test_kaggle_upload_sends_the_complete_directory(tmp_path, online, kaggle_calls, monkeypatch):
    seen = {}
    real_upload = kagglehub.model_upload

    def upload_and_look(handle, local_model_dir, **kwargs):
        # At upload time the directory is in place and complete.
        seen["files"] = sorted(p.name for p in (tmp_path / "published").iterdir())
        real_upload(handle, local_model_dir, **kwargs)

    monkeypatch.setattr(kagglehub, "model_upload", upload_and_look)
    result = publish_preset(SUPERSENSE, tmp_path / "published", handle=KAGGLE, exports=(),
                            version_notes="first")
    assert result["uploaded"] is True and result["handle"] == KAGGLE
    [call] = kaggle_calls
    assert call["handle"] == "me/albert-supersense/keras/tiny_student"
    assert call["directory"] == str(tmp_path / "published")
    assert call["license_name"] == "Apache 2.0" and call["version_notes"] == "first"
    assert MARKER_FILE in call["ignore_patterns"]
    assert {"README.md", "config.json", "task.json", "labels.txt", "model.weights.h5"} <= set(seen["files"])
    card = (tmp_path / "published" / "README.md").read_text()
    assert f'from_preset("{KAGGLE}")' in card


def test_huggingface_upload_keeps_our_card(tmp_path, online, monkeypatch):
    calls = []

    class Repo:
        repo_id = "me/albert-tiny"

    def create_repo(repo_id, private=None, exist_ok=False):
        calls.append(("create_repo", repo_id, private, exist_ok))
        return Repo()

    def upload_folder(repo_id, folder_path, commit_message=None, ignore_patterns=None):
        calls.append(("upload_folder", repo_id, folder_path, ignore_patterns))
        calls.append(("card", (tmp_path / "published" / "README.md").read_text()))

    monkeypatch.setattr(huggingface_hub, "create_repo", create_repo)
    monkeypatch.setattr(huggingface_hub, "upload_folder", upload_folder)
    publish_preset(SUPERSENSE, tmp_path / "published", handle="hf://me/albert-tiny", exports=())
    assert calls[0] == ("create_repo", "me/albert-tiny", True, True)
    assert calls[1][:3] == ("upload_folder", "me/albert-tiny", str(tmp_path / "published"))
    uploaded_card = calls[2][1]
    # Ours, as uploaded and as left on disk (keras-hub's would claim JAX).
    assert "**every Keras backend**" in uploaded_card
    assert (tmp_path / "published" / "README.md").read_text() == uploaded_card


def test_offline_fails_clearly_uploads_nothing_and_keeps_the_directory(tmp_path, kaggle_calls, monkeypatch):
    monkeypatch.setattr(hub_upload, "network_available", lambda host: False)
    with pytest.raises(UploadError, match="Cannot reach www.kaggle.com .*Nothing was uploaded") as error:
        publish_preset(SUPERSENSE, tmp_path / "published", handle=KAGGLE, exports=())
    assert str(tmp_path / "published") in str(error.value) and str(error.value).endswith(hub_upload.RETRY)
    assert kaggle_calls == []
    restored = keras_albert.AlbertClassifier.from_preset(str(tmp_path / "published"))
    assert restored.label_names and (tmp_path / "published" / "README.md").is_file()
    # Back online: the same directory goes up as it is, under its card's licence.
    monkeypatch.setattr(hub_upload, "network_available", lambda host: True)
    assert upload_published(tmp_path / "published", KAGGLE) == KAGGLE
    assert kaggle_calls[0]["directory"] == str(tmp_path / "published")
    assert kaggle_calls[0]["license_name"] == "Apache 2.0"


def test_a_failed_upload_names_the_cause_and_claims_nothing(tmp_path, online, monkeypatch):
    def broken(*args, **kwargs):
        raise ConnectionError("connection reset by peer")

    monkeypatch.setattr(kagglehub, "model_upload", broken)
    with pytest.raises(UploadError, match="upload to .* failed: ConnectionError: connection reset by peer"):
        publish_preset(SUPERSENSE, tmp_path / "published", handle=KAGGLE, exports=(), license="mit")
    assert (tmp_path / "published" / "README.md").is_file()
    assert "license: mit" in (tmp_path / "published" / "README.md").read_text()


def test_upload_published_takes_only_a_published_directory(tmp_path, online, kaggle_calls):
    (tmp_path / "preset").mkdir()
    with pytest.raises(ValueError, match="not a directory written by publish_preset"):
        upload_published(tmp_path / "preset", KAGGLE)
    with pytest.raises(ValueError, match="unknown scheme"):
        upload_published(tmp_path / "preset", "ftp://x")
    assert kaggle_calls == []
