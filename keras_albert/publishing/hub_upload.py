"""Model-hub handles and the one network step of publishing: the upload.

`kaggle://OWNER/MODEL/keras/VARIATION` goes to Kaggle Models through
`kagglehub.model_upload` (what `keras_hub.upload_preset` calls, here with
the licence and version notes it does not pass). `hf://[OWNER/]NAME` goes
to the Hugging Face Hub through `huggingface_hub`: `keras_hub.upload_preset`
would replace our model card with its generic one (which claims JAX and
PyTorch support) whenever the remote repository has none, and then delete
the README.md from the local directory.

Both uploads become visible in one step (Kaggle creates the model version
after every file is stored; the Hub makes one commit), so an upload that
fails midway publishes no files; a model entry or repository created just
before (empty, private by default) may remain.
"""

import glob
import re

from keras_albert.presets.preset_resolution import network_available
from keras_albert.utils.atomic_directory import MARKER_FILE
from keras_albert.utils.atomic_directory import foreign_entries

ACCEPTED_HANDLES = (
    "kaggle://OWNER/MODEL/keras/VARIATION (Kaggle Models; no version: Kaggle numbers them)",
    "hf://OWNER/NAME or hf://NAME (Hugging Face Hub)",
)
_SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_HOSTS = {"kaggle": "www.kaggle.com", "hf": "huggingface.co"}
# Licence identifiers (Hugging Face's spelling) and Kaggle's names for them.
KAGGLE_LICENSE_NAMES = {"apache-2.0": "Apache 2.0", "mit": "MIT"}
# Bookkeeping of this package's atomic writes: not part of the model.
_NOT_UPLOADED = [MARKER_FILE, f"*/{MARKER_FILE}"]


def not_uploaded(directory):
    """Ignore patterns: the bookkeeping, and what the owner added to the
    directory after publishing (a `.git`, notes), which only they share."""
    patterns = list(_NOT_UPLOADED)
    for entry in foreign_entries(directory) or ():
        patterns += [glob.escape(entry), glob.escape(entry) + "/*"]
    return patterns


# The one retry instruction (the README says the same): publishing again
# replaces its own earlier output, so the same command or call works as is.
RETRY = ("to retry, run the same publish command (or call) again once online: it "
         "replaces its own earlier output, no --overwrite needed.")


class UploadError(RuntimeError):
    """The upload did not complete; the local directory is complete."""


def _bad_handle(handle, why):
    return ValueError(
        f"`handle` {handle!r} {why}. Accepted forms: {'; '.join(ACCEPTED_HANDLES)}."
    )


def check_handle(handle):
    """Returns (scheme, target) of a handle: ("kaggle", "owner/model/keras/
    variation") or ("hf", "owner/name"); a ValueError naming the handle and
    the accepted forms otherwise.

    Example:
    >>> check_handle("kaggle://me/albert/keras/tiny_supersense")
    ('kaggle', 'me/albert/keras/tiny_supersense')
    >>> check_handle("hf://me/albert-tiny")
    ('hf', 'me/albert-tiny')
    """
    if not isinstance(handle, str):
        raise _bad_handle(handle, f"must be a string, not {type(handle).__name__}")
    scheme, separator, target = handle.partition("://")
    if not separator or scheme not in _HOSTS:
        raise _bad_handle(handle, "has an unknown scheme")
    parts = target.split("/")
    bad = [part for part in parts if not _SLUG.match(part)]
    if bad:
        raise _bad_handle(handle, f"has empty or invalid parts {bad!r} (letters, digits, '.', '_', '-')")
    if scheme == "kaggle":
        if len(parts) == 5:
            raise _bad_handle(handle, "names a version; leave it out (Kaggle numbers new versions itself)")
        if len(parts) != 4:
            raise _bad_handle(handle, f"has {len(parts)} parts after kaggle://, not 4")
        if parts[2] != "keras":
            raise _bad_handle(handle, f"names the framework {parts[2]!r}; a Keras preset is published under 'keras'")
    elif len(parts) > 2:
        raise _bad_handle(handle, f"has {len(parts)} parts after hf://, not 1 or 2")
    return scheme, target


def check_license(license):
    """The licence identifier; Kaggle needs one of `KAGGLE_LICENSE_NAMES`."""
    if license not in KAGGLE_LICENSE_NAMES:
        raise ValueError(
            f"`license` must be one of {sorted(KAGGLE_LICENSE_NAMES)} (Hugging Face "
            f"identifiers; Kaggle calls them {sorted(KAGGLE_LICENSE_NAMES.values())}). "
            f"Received: license={license!r}"
        )
    return license


def check_uploader(scheme):
    """Fails before any work when the client library for `scheme` is missing."""
    try:
        if scheme == "kaggle":
            import kagglehub  # noqa: F401  (a keras-hub dependency)
        else:
            import huggingface_hub  # noqa: F401
    except ImportError as error:
        package = "kagglehub" if scheme == "kaggle" else "huggingface_hub"
        raise ImportError(
            f"Uploading to {scheme}:// needs the `{package}` package: pip install "
            f"{package} (or keras-albert[publish]). ({error})"
        ) from None


def _upload_kaggle(directory, target, license, version_notes):
    import kagglehub

    kagglehub.model_upload(
        target, str(directory), license_name=KAGGLE_LICENSE_NAMES[license],
        version_notes=version_notes, ignore_patterns=not_uploaded(directory),
    )


def _upload_huggingface(directory, target, private, version_notes):
    import huggingface_hub

    # `private` only applies when the repository is created here.
    repo = huggingface_hub.create_repo(target, private=private, exist_ok=True)
    huggingface_hub.upload_folder(
        repo_id=repo.repo_id, folder_path=str(directory),
        commit_message=version_notes or "Upload a keras_albert model",
        ignore_patterns=not_uploaded(directory),
    )


def upload_directory(directory, handle, license="apache-2.0", private=True, version_notes=""):
    """Uploads a complete publishable `directory` to `handle`.

    Raises `UploadError` (naming the handle, the cause and the local
    directory, which stays as it is) when the host cannot be reached or the
    upload fails; no files are published then.
    """
    scheme, target = check_handle(handle)
    host = _HOSTS[scheme]
    if not network_available(host):
        raise UploadError(
            f"Cannot reach {host} to upload to {handle!r}: offline? Nothing was "
            f"uploaded. The publishable directory {str(directory)!r} is complete; "
            f"{RETRY}"
        )
    try:
        if scheme == "kaggle":
            _upload_kaggle(directory, target, license, version_notes)
        else:
            _upload_huggingface(directory, target, private, version_notes)
    except Exception as error:  # any client or transport error: say so, claim nothing
        raise UploadError(
            f"The upload to {handle!r} failed: {type(error).__name__}: {error}. "
            f"The publishable directory {str(directory)!r} is complete and "
            f"unchanged; {RETRY}"
        ) from error
