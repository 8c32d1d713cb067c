"""Client virtual environments for exported TFLite files: pip only, cached.

Each client is a fresh venv holding only what an on-device-style client
installs, so a script run there shows what works without TensorFlow or
keras_albert:

- `mediapipe`: MediaPipe Tasks (`TextClassifier` reads tokenizer and
  labels from the file's metadata);
- `litert`: ai-edge-litert and sentencepiece (the client tokenizes itself
  from the files in the metadata).

    python benchmarks/client_environments.py            # build both, print their Pythons
    python benchmarks/client_environments.py --cache DIR

The venvs live under `--cache` (default `$KERAS_ALBERT_CLIENT_ENVS`, else
`~/.cache/keras_albert/tflite_clients`), one directory per client and
requirement set; each is built beside its place and renamed into it when
pip succeeds, so a failed or concurrent build never leaves a half venv in
use. A failed build raises (it is never skipped).
"""

import argparse
import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

CLIENTS = {
    "mediapipe": ("mediapipe==1.2.3",),
    "litert": ("ai-edge-litert==2.3.0", "sentencepiece==0.2.3"),
}
# What a client process inherits: enough for pip and the dynamic loader,
# nothing that points Python at other packages (no PYTHONPATH, no venv).
_KEPT_VARIABLES = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE",
                   "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_CONFIG_FILE")


def default_cache():
    return pathlib.Path(
        os.environ.get("KERAS_ALBERT_CLIENT_ENVS")
        or pathlib.Path.home() / ".cache" / "keras_albert" / "tflite_clients"
    )


def clean_environment():
    """Environment variables for a client process (see `_KEPT_VARIABLES`)."""
    return {name: os.environ[name] for name in _KEPT_VARIABLES if name in os.environ}


def _check_client(client):
    if client not in CLIENTS:
        raise ValueError(f"Unknown client: client={client!r}. Known: {sorted(CLIENTS)}")


def _directory(client, cache):
    key = "\n".join((sys.version.split()[0],) + CLIENTS[client])
    return pathlib.Path(cache) / f"{client}-{hashlib.sha256(key.encode()).hexdigest()[:10]}"


def _python(directory):
    return pathlib.Path(directory) / "bin" / "python"


def _run(command, what):
    result = subprocess.run(command, env=clean_environment(), capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(
            f"{what} failed (exit {result.returncode}): {' '.join(map(str, command))}\n"
            f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        )


def client_python(client, cache=None):
    """The Python of `client`'s venv, built first if it is not cached."""
    _check_client(client)
    directory = _directory(client, cache or default_cache())
    if _python(directory).exists():
        return _python(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = pathlib.Path(tempfile.mkdtemp(prefix=f".{directory.name}-", dir=directory.parent))
    try:
        # The base interpreter, not a venv's: the client sees none of ours.
        base = getattr(sys, "_base_executable", sys.executable)
        _run([base, "-m", "venv", str(staging)], f"Creating the {client} venv")
        _run([str(_python(staging)), "-m", "pip", "install", "--quiet", *CLIENTS[client]],
             f"Installing {', '.join(CLIENTS[client])} into the {client} venv")
        try:
            # Scripts run as `python -m` / `python script`, so the move is safe.
            staging.rename(directory)
        except OSError:
            if not _python(directory).exists():  # Not a concurrent build that won.
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return _python(directory)


def run_client(client, script, arguments, cache=None, timeout=1800):
    """Runs `script` with `client`'s Python, isolated (`-I`: no user site,
    no environment variables for Python, not even the script's directory
    on the path) and with a clean environment; returns the CompletedProcess."""
    python = client_python(client, cache)
    return subprocess.run(
        [str(python), "-I", str(script), *map(str, arguments)],
        env=clean_environment(), capture_output=True, text=True, timeout=timeout,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", default=None, help=f"where the venvs live (default: {default_cache()})")
    parser.add_argument("--clients", nargs="+", default=sorted(CLIENTS), choices=sorted(CLIENTS))
    args = parser.parse_args(argv)
    for client in args.clients:
        print(f"{client}: {client_python(client, args.cache)}", flush=True)


if __name__ == "__main__":
    main()
