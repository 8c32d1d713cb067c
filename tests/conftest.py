"""Shared fixtures: a tiny vocabulary and tiny model configs, made here."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import random

import numpy as np
import pytest

_WORDS = (
    "the a an cat dog bird fish horse mouse house garden river tree road "
    "city village walks runs sleeps eats sees finds likes loves hates "
    "quickly slowly happily sadly red green blue small large old young "
    "emma anne elinor marianne darcy bennet letter dinner ball morning "
    "evening sister brother father mother friend visit party week year"
).split()


def synthetic_sentences(count=2000, seed=0):
    """Deterministic English-like sentences for training tiny vocabularies."""
    rng = random.Random(seed)
    return [
        " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 12))) + "."
        for _ in range(count)
    ]


def backbone_inputs(length, batch=2, seed=0):
    """Random backbone inputs: the second row half padding, two segments."""
    rng = np.random.default_rng(seed)
    mask = np.ones((batch, length), "int32")
    mask[1, length // 2:] = 0
    return {
        "token_ids": rng.integers(5, 120, (batch, length)).astype("int32"),
        "segment_ids": (np.arange(length) >= length // 3).astype("int32")[None].repeat(batch, 0),
        "padding_mask": mask,
    }


@pytest.fixture(scope="session", autouse=True)
def jax_compilation_cache(tmp_path_factory):
    """One XLA compilation cache for the JAX processes this session starts.

    The backend tests' workers and the CLI runs on JAX compile the same
    tiny programs again and again, each in a fresh process; with the cache
    each is compiled once (tests/backends/test_backend_parity.py alone: 160
    -> 138 CPU s, the cache starting empty). Only where a compiled program
    comes from changes, not what runs. A cache the caller set is kept.
    """
    cache = {}
    if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
        cache = {
            "JAX_COMPILATION_CACHE_DIR": str(tmp_path_factory.mktemp("jax_compilation_cache")),
            "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
            "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
        }
    os.environ.update(cache)
    yield
    for name in cache:
        os.environ.pop(name, None)


@pytest.fixture(scope="session")
def sentencepiece_proto():
    from keras_albert.data.sentencepiece_training import train_sentencepiece

    return train_sentencepiece(synthetic_sentences(), vocabulary_size=80)


@pytest.fixture(scope="session")
def tiny_backbone_config():
    return dict(
        vocabulary_size=120,
        num_layers=2,
        num_heads=2,
        embedding_dim=16,
        hidden_dim=32,
        intermediate_dim=64,
        max_sequence_length=32,
    )


@pytest.fixture
def unwritable_directory(tmp_path, monkeypatch):
    """A directory no one may create files in: read-only for a user,
    immutable (chattr +i) for root, who ignores permission bits. Where root
    has no chattr, creating a file there fails with EACCES at `os.open`, as
    the kernel would answer a user."""
    import errno
    import os
    import shutil
    import subprocess

    locked = tmp_path / "locked"
    locked.mkdir()
    if os.geteuid() != 0:
        locked.chmod(0o500)
        yield locked
        locked.chmod(0o700)
    elif shutil.which("chattr") and subprocess.run(
            ["chattr", "+i", str(locked)], capture_output=True).returncode == 0:
        yield locked
        subprocess.run(["chattr", "-i", str(locked)], check=True)
    else:
        real_open = os.open

        def refusing_open(path, flags, *args, **kwargs):
            if str(path).startswith(str(locked) + os.sep) and flags & os.O_CREAT:
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
            return real_open(path, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", refusing_open)
        yield locked
