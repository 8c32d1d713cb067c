"""Runs keras-hub's own ALBERT test files against keras_albert's classes.

keras-hub ships its tests only in its source repository (neither its wheel
nor its sdist holds them), so this takes a checkout of keras-hub at the
installed version (0.32): `git clone --branch v0.32.0
https://github.com/keras-team/keras-hub`. Its
`keras_hub/src/models/albert/*_test.py` files are copied to a scratch
directory with one change: `from keras_hub.src.models.albert.<module> import
X` becomes `from keras_albert.models import X`. keras-hub's `TestCase` (from
the installed keras-hub) is used as it is; the vocabulary the tests read
(`albert_test_vocab.spm`, `no_special_token_vocab.spm`) are trained here
with keras-hub's recipes (tools/sentencepiece_testing/ in its repository).
keras-hub's `large` tests run (SavedModel round trips); the ones that
download published presets (`test_smallest_preset`, `test_all_presets`)
cannot run offline and are deselected.

Each backend runs in its own process: Keras reads KERAS_BACKEND once.

Usage:
    python tools/keras_hub_albert_tests.py --keras_hub_source ../keras-hub \\
        --backends tensorflow,torch \\
        --output benchmarks/results/keras_hub_albert_tests.json
"""

import argparse
import io
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree

ROOT = pathlib.Path(__file__).resolve().parents[1]
TEST_DIR = pathlib.Path("keras_hub", "src", "models", "albert")
VOCABULARY_FILE = "albert_test_vocab.spm"
NO_SPECIAL_TOKENS_FILE = "no_special_token_vocab.spm"
BACKENDS = ("tensorflow", "torch", "jax")
# The only change made to keras-hub's files: the classes under test.
_CLASS_IMPORT = re.compile(r"from keras_hub\.src\.models\.albert\.\w+ import")
_OURS = "from keras_albert.models import"

# The tests that download keras-hub's published presets.
_OFFLINE = "not test_smallest_preset and not test_all_presets"

# Points keras-hub's TestCase at the vocabulary made here, and declares the
# markers keras-hub's own conftest declares.
_CONFTEST = """
import pathlib

import pytest
from keras_hub.src.tests.test_case import TestCase

TEST_DATA = str(pathlib.Path(__file__).parent / "test_data")
TestCase.get_test_data_dir = lambda self: TEST_DATA


def pytest_configure(config):
    for marker in ("large", "extra_large", "tf_only", "kaggle_key_required"):
        config.addinivalue_line("markers", marker)
"""


def switch_class_imports(source):
    """`source` with keras-hub's ALBERT class imports pointed at
    keras_albert.models; returns (text, number of imports switched)."""
    return _CLASS_IMPORT.subn(_OURS, source)


def _train_vocabulary(sentences, **options):
    import sentencepiece

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences), model_writer=model, minloglevel=2, **options
    )
    return model.getvalue()


def albert_test_vocabulary():
    """keras-hub's test vocabulary, trained with its recipe: 12 pieces,
    ids 5-11 for "the brown earth fox is quick round"."""
    from sentencepiece import sentencepiece_model_pb2

    from keras_albert.data.sentencepiece_training import ALBERT_SPECIAL_PIECES

    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(_train_vocabulary(
        ["the quick brown fox", "the earth is round"],
        vocab_size=13,
        model_type="WORD",
        **ALBERT_SPECIAL_PIECES,
    ))
    # Newer SentencePiece also adds "\u2581[MASK]" for the user-defined
    # symbol; keras-hub's file (an older SentencePiece, vocab_size=12) has no
    # such piece, and the tests expect the word ids that follow it.
    pieces = [p for p in proto.pieces if p.piece != "\u2581[MASK]"]
    del proto.pieces[:]
    proto.pieces.extend(pieces)
    proto.trainer_spec.vocab_size = len(pieces)
    return proto.SerializeToString()


def no_special_token_vocabulary():
    """keras-hub's vocabulary without ALBERT's special tokens (its recipe:
    create_no_special_token_proto.py)."""
    return _train_vocabulary(["abc"], vocab_size=5, pad_id=-1, eos_id=-1, bos_id=-1)


def prepare(keras_hub_source, scratch):
    """Writes the switched test files, vocabulary and conftest to `scratch`."""
    source_dir = pathlib.Path(keras_hub_source) / TEST_DIR
    tests = sorted(source_dir.glob("*_test.py"))
    if not tests:
        raise ValueError(
            f"`--keras_hub_source` {str(keras_hub_source)!r} holds no "
            f"{TEST_DIR}/*_test.py: pass a keras-hub source checkout "
            "(git clone --branch v0.32.0 https://github.com/keras-team/keras-hub)."
        )
    scratch = pathlib.Path(scratch)
    for test in tests:
        text, switched = switch_class_imports(test.read_text(encoding="utf-8"))
        if not switched:
            raise ValueError(f"{test} imports no keras-hub ALBERT class: not an ALBERT test file.")
        (scratch / test.name).write_text(text, encoding="utf-8")
    (scratch / "test_data").mkdir()
    (scratch / "test_data" / VOCABULARY_FILE).write_bytes(albert_test_vocabulary())
    (scratch / "test_data" / NO_SPECIAL_TOKENS_FILE).write_bytes(no_special_token_vocabulary())
    (scratch / "conftest.py").write_text(_CONFTEST, encoding="utf-8")
    return [test.name for test in tests]


def _outcomes(junit_xml):
    """{test id: (outcome, first message line)} from pytest's JUnit XML."""
    outcomes = {}
    for case in ElementTree.parse(junit_xml).getroot().iter("testcase"):
        class_name = case.get("classname")
        if class_name.endswith(".TestCase") or case.get("name") == "test_session":
            # keras-hub's base class (collected where it is imported) and
            # tf.test.TestCase's `test_session` helper: no ALBERT tests.
            continue
        name = f"{class_name}.{case.get('name')}"
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            found = case.find(tag)
            if found is not None:
                outcome = {"failure": "failed"}.get(tag, tag)
                message = (found.get("message") or "").strip().splitlines()[:1]
                message = message[0][:300] if message else ""
                break
        outcomes[name] = (outcome, message)
    return outcomes


def run_backend(scratch, backend, timeout=3600):
    """Runs the prepared tests on `backend` in a fresh process."""
    scratch = pathlib.Path(scratch)
    junit = scratch / f"results_{backend}.xml"
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="2")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    started = time.monotonic()
    finished = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "-k", _OFFLINE, f"--junitxml={junit}", "--rootdir", str(scratch), str(scratch)],
        cwd=scratch, env=env, timeout=timeout, check=False,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    if not junit.is_file():
        # pytest writes no report when it cannot start (e.g. a conftest
        # import fails); its last lines say why.
        tail = "\n".join(finished.stdout.strip().splitlines()[-15:])
        raise RuntimeError(
            f"pytest wrote no results on the {backend} backend "
            f"(exit code {finished.returncode}). Its last lines:\n{tail}")
    outcomes = _outcomes(junit)
    counts = {kind: sum(1 for outcome, _ in outcomes.values() if outcome == kind)
              for kind in ("passed", "failed", "error", "skipped")}
    return {
        **counts,
        "total": len(outcomes),
        "seconds": round(time.monotonic() - started, 1),
        "not_passed": {name: {"outcome": outcome, "message": message}
                       for name, (outcome, message) in sorted(outcomes.items())
                       if outcome != "passed"},
    }


def _source_revision(keras_hub_source):
    """The checkout's commit and the version its sources declare."""
    commit = subprocess.run(
        ["git", "-C", str(keras_hub_source), "rev-parse", "HEAD"],
        capture_output=True, text=True, check=False,
    ).stdout.strip() or None
    version_file = pathlib.Path(keras_hub_source) / "keras_hub" / "src" / "version.py"
    version = None
    if version_file.is_file():
        found = re.search(r'__version__ = "([^"]+)"', version_file.read_text(encoding="utf-8"))
        version = found.group(1) if found else None
    return {"commit": commit, "version": version}


def run(keras_hub_source, backends):
    """{backend: results} for keras-hub's ALBERT tests against ours."""
    import keras_hub

    with tempfile.TemporaryDirectory(prefix="keras_hub_albert_tests_") as scratch:
        files = prepare(keras_hub_source, scratch)
        results = {backend: run_backend(scratch, backend) for backend in backends}
    return {
        "keras_hub_version": keras_hub.__version__,
        "keras_hub_source": _source_revision(keras_hub_source),
        "deselected": _OFFLINE,
        "test_files": files,
        "change": f"'from keras_hub.src.models.albert.<module> import' -> '{_OURS}'",
        "backends": results,
    }


def _backends(text):
    backends = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in backends if name not in BACKENDS]
    if not backends or unknown:
        raise argparse.ArgumentTypeError(
            f"--backends takes a comma-separated list of {BACKENDS}. Received: {text!r}"
        )
    return backends


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keras_hub_source", required=True,
                        help="a keras-hub source checkout (the installed version)")
    parser.add_argument("--backends", type=_backends, default=["tensorflow"],
                        help="comma-separated Keras backends, each run in its own process")
    parser.add_argument("--output", type=pathlib.Path, default=None,
                        help="JSON file to write the results to")
    args = parser.parse_args(argv)
    results = run(args.keras_hub_source, args.backends)
    # The checkout's place on this machine stays out of the record: its
    # commit is in "keras_hub_source".
    arguments = [
        "<keras-hub checkout>" if argument == args.keras_hub_source else argument
        for argument in (sys.argv[1:] if argv is None else argv)
    ]
    print(json.dumps(results, indent=2))
    if args.output:
        # Recorded as the benchmarks record: command, date, machine, thread
        # count and library versions beside the results.
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from recording import write_result

        args.output.parent.mkdir(parents=True, exist_ok=True)
        write_result(args.output.absolute(), results, argv=[__file__, *arguments])
    return 0


if __name__ == "__main__":
    sys.exit(main())
