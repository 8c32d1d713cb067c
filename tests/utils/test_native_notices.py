"""TensorFlow's native notices no user can act on are held back; every other
line on stderr still shows, and all of it on an error."""

import logging
import os
import pathlib
import subprocess
import sys

import pytest

from keras_albert.utils import native_notices
from keras_albert.utils.native_notices import COMMAND_NOTICES
from keras_albert.utils.native_notices import SAVED_MODEL_NOTICES
from keras_albert.utils.native_notices import SENTENCEPIECE_RESOURCE_NOTICES
from keras_albert.utils.native_notices import STARTUP_NOTICES
from keras_albert.utils.native_notices import TFLITE_NOTICES
from keras_albert.utils.native_notices import forward_without_notices
from keras_albert.utils.native_notices import notices_held_back
from keras_albert.utils.native_notices import without_notices

ROOT = pathlib.Path(__file__).resolve().parents[2]

# As TensorFlow 2.21 writes them on a machine without a CUDA driver.
STARTUP_LINES = [
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    "I0000 00:00:1795621125.579105   14204 port.cc:153] oneDNN custom operations are on. "
    "You may see slightly different numerical results due to floating-point round-off errors "
    "from different computation orders. To turn them off, set the environment variable "
    "`TF_ENABLE_ONEDNN_OPTS=0`.",
    "I0000 00:00:1795621125.579471   14204 cudart_stub.cc:31] Could not find cuda drivers on "
    "your machine, GPU will not be used.",
    "E0000 00:00:1795621126.436301   14204 cuda_platform.cc:52] failed call to cuInit: INTERNAL: "
    "CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)",
    "E0000 00:00:1795621513.493133   15863 util.cc:131] oneDNN supports DT_INT64 only on "
    "platforms with AVX-512. Falling back to the default Eigen-based implementation if present.",
]
CUINIT = STARTUP_LINES[3]


def _text(lines):
    return "".join(line + "\n" for line in lines)


def test_only_the_notices_are_dropped_in_order():
    kept = ["W0000 00:00:1.0   1 some_op.cc:12] A real warning.", "Traceback (most recent call last):"]
    text = _text([STARTUP_LINES[0], kept[0], *STARTUP_LINES[1:4], kept[1]])
    assert without_notices(text, STARTUP_NOTICES) == _text(kept)
    # oneDNN's int64 note is held back where an export checks its graphs.
    assert without_notices(_text(STARTUP_LINES[4:]), STARTUP_NOTICES) == _text(STARTUP_LINES[4:])
    assert without_notices(_text(STARTUP_LINES[4:]), SAVED_MODEL_NOTICES) == ""
    # A notice inside another line is not a notice line.
    quoted = "error: TensorFlow said 'failed call to cuInit' " + STARTUP_LINES[0]
    assert without_notices(quoted + "\n", STARTUP_NOTICES) == quoted + "\n"
    # The TFLite notices are not start-up notices.
    delegate = "INFO: Created TensorFlow Lite XNNPACK delegate for CPU.\n"
    assert without_notices(delegate, STARTUP_NOTICES) == delegate
    assert without_notices(delegate, TFLITE_NOTICES) == ""


# As TensorFlow 2.21's converter writes them for a raw-string model.
CUSTOM_OP_LINES = [
    "W0000 00:00:1796624370.999243   12437 flatbuffer_export.cc:4248] The following operation(s) "
    "need TFLite custom op implementation(s):",
    "Custom ops: TFText>FastSentencepieceTokenize",
    "Details:",
    "\ttf.TFText>FastSentencepieceTokenize(tensor<419408xui8>, tensor<1x!tf_type.string>, tensor<i32>, "
    "tensor<f32>, tensor<i1>, tensor<i1>, tensor<i1>) -> (tensor<?xi32>, tensor<2xi32>) : "
    "{Tsplits = i32, device = \"\", out_type = i32}",
    "See instructions: https://www.tensorflow.org/lite/guide/ops_custom",
]


def test_the_raw_string_models_custom_op_notice_is_dropped_and_no_other_custom_op():
    assert without_notices(_text(CUSTOM_OP_LINES), TFLITE_NOTICES) == ""
    other = "\ttf.SomeOtherOp(tensor<i32>) -> (tensor<i32>) : {}"
    assert without_notices(_text([other, "Custom ops: SomeOtherOp"]), TFLITE_NOTICES) == _text(
        [other, "Custom ops: SomeOtherOp"])
    assert without_notices(_text(CUSTOM_OP_LINES), STARTUP_NOTICES) == _text(CUSTOM_OP_LINES)


def test_a_failed_cuinit_shows_where_a_driver_exists(monkeypatch):
    monkeypatch.setattr(native_notices.ctypes.util, "find_library", lambda name: "libcuda.so.1")
    assert without_notices(_text([CUINIT]), STARTUP_NOTICES) == _text([CUINIT])
    # TensorFlow's own "no driver" line settles it.
    assert without_notices(_text(STARTUP_LINES[2:4]), STARTUP_NOTICES) == ""
    monkeypatch.setattr(native_notices.ctypes.util, "find_library", lambda name: None)
    assert without_notices(_text([CUINIT]), STARTUP_NOTICES) == ""


def _write_to_descriptor_2(lines):
    # What native code does: no Python stream in between.
    os.write(2, _text(lines).encode())


def test_held_back_lines_come_back_without_notices(capfd):
    with notices_held_back(STARTUP_NOTICES):
        _write_to_descriptor_2([STARTUP_LINES[0], "a real problem", STARTUP_LINES[2]])
    assert capfd.readouterr().err == "a real problem\n"


def test_everything_comes_back_on_an_error(capfd):
    with pytest.raises(RuntimeError, match="start-up failed"):
        with notices_held_back(STARTUP_NOTICES):
            _write_to_descriptor_2(STARTUP_LINES)
            raise RuntimeError("start-up failed")
    assert capfd.readouterr().err == _text(STARTUP_LINES)


def test_tf_cpp_min_log_level_0_shows_everything(capfd, monkeypatch):
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "0")
    with notices_held_back(STARTUP_NOTICES):
        _write_to_descriptor_2(STARTUP_LINES[:1])
    assert capfd.readouterr().err == _text(STARTUP_LINES[:1])


def _user_environment():
    # As a user runs it: no TF_CPP_MIN_LOG_LEVEL from the test setup.
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    return dict(env, PYTHONPATH=str(ROOT))


def _run(arguments):
    return subprocess.run([sys.executable, *arguments], env=_user_environment(),
                          capture_output=True, text=True, timeout=600)


def _run_script(script):
    result = _run(["-c", script])
    assert result.returncode == 0, result.stderr[-3000:]
    return result


@pytest.mark.large
def test_import_and_fit_write_nothing_on_stderr():
    script = (
        "import numpy as np, keras_albert\n"
        "task = keras_albert.AlbertClassifier.from_preset('albert_tiny_en_student_supersense')\n"
        "task.fit(['a big dog', 'a red car'], [0, 1], batch_size=2, epochs=1, verbose=0)\n"
        "print(task.predict(['a cat'], verbose=0).shape)\n"
    )
    result = _run_script(script)
    assert result.stdout.strip().endswith("(1, 26)")
    # Only oneDNN's int64 note, which comes inside the first training step
    # and is left there (see native_notices).
    assert without_notices(result.stderr, SAVED_MODEL_NOTICES) == ""
    assert not [line for line in result.stderr.splitlines() if "oneDNN supports DT_INT64" not in line]


def test_import_leaves_the_runtime_configurable():
    # Strategies that configure the runtime at start-up (multi-worker
    # collectives) and device settings need it uninitialised after import.
    script = (
        "import keras_albert, tensorflow as tf\n"
        "cpu = tf.config.list_physical_devices('CPU')[0]\n"
        "tf.config.set_logical_device_configuration(\n"
        "    cpu, [tf.config.LogicalDeviceConfiguration()] * 2)\n"
        "print(len(tf.config.list_logical_devices('CPU')))\n"
    )
    assert _run_script(script).stdout.strip() == "2"


@pytest.mark.large
def test_int8_export_writes_nothing_on_stderr(tmp_path):
    # The README walk (tests/test_readme_blocks.py) holds its exports, the
    # SavedModel and the float ones, to the same.
    result = _run(["-m", "keras_albert", "export", "--preset", "albert_tiny_en_student_supersense",
                   "--output", str(tmp_path / "export"), "--format", "tflite", "--quantize", "int8"])
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stderr == ""
    assert "Importing TensorFlow and keras_albert: done" in result.stdout


@pytest.mark.large
def test_a_real_error_still_reaches_stderr(tmp_path):
    result = _run(["-m", "keras_albert", "export", "--preset", str(tmp_path / "missing"),
                   "--output", str(tmp_path / "export"), "--format", "saved_model"])
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and "missing" in result.stderr
    assert "cuInit" not in result.stderr and "absl::InitializeLog" not in result.stderr


# As TensorFlow 2.21 writes them while a command runs.
COMMAND_LINES = [
    "W0000 00:00:1795761216.617106   15227 op_kernel.cc:1858] OP_REQUIRES failed at "
    "sentencepiece_kernels.cc:658 : NOT_FOUND: Resource localhost/_0_SentencepieceOp/"
    "N10tensorflow4text12_GLOBAL__N_121SentencepieceResourceE does not exist.",
    "W0000 00:00:1795761216.617163   15227 local_rendezvous.cc:412] Local rendezvous is aborting with "
    "status: NOT_FOUND: Resource localhost/_0_SentencepieceOp/"
    "N10tensorflow4text12_GLOBAL__N_121SentencepieceResourceE does not exist.",
    "I0000 00:00:1795761247.655768   15864 cpu_feature_guard.cc:227] This TensorFlow binary is optimized "
    "to use available CPU instructions in performance-critical operations.",
    "To enable the following instructions: AVX2 AVX512F AVX512_VNNI AVX512_BF16 AVX_VNNI FMA, in other "
    "operations, rebuild TensorFlow with the appropriate compiler flags.",
    "I0000 00:00:1795761247.700000   15864 model_dataset_op.cc:92] Memory patch applied: "
    "M_TRIM_THRESHOLD=128 kb was set.",
    STARTUP_LINES[4],
]


def test_command_notices_drop_only_those_lines():
    real = ["W0000 00:00:1.0   1 op_kernel.cc:1858] OP_REQUIRES failed at conv_ops.cc:1 : "
            "INVALID_ARGUMENT: a real failure", "NOT_FOUND: Resource localhost/_0_MyOp/x does not exist."]
    text = _text([COMMAND_LINES[0], real[0], *COMMAND_LINES[1:], *STARTUP_LINES[:3], real[1]])
    assert without_notices(text, COMMAND_NOTICES) == _text(real)
    # The tokenizer's check holds back its own two lines, no others.
    assert without_notices(_text(COMMAND_LINES), SENTENCEPIECE_RESOURCE_NOTICES) == _text(COMMAND_LINES[2:])


def test_retracing_warnings_are_dropped_and_other_tensorflow_warnings_kept():
    native_notices.drop_retracing_warnings()
    tf_logger = logging.getLogger("tensorflow")

    def kept(message):
        record = logging.LogRecord("tensorflow", logging.WARNING, __file__, 1, message, None, None)
        return all(f.filter(record) for f in tf_logger.filters)

    assert not kept("5 out of the last 5 calls to <function f at 0x1> triggered tf.function retracing. "
                    "Tracing is expensive ...")
    assert kept("Your input ran out of data; interrupting training.")


def test_forwarding_keeps_lines_in_order_and_shows_a_partial_line():
    source_read, source_write = os.pipe()
    target_read, target_write = os.pipe()
    os.write(source_write, _text([STARTUP_LINES[0], "first"]).encode() + b"sec")
    os.write(source_write, b"ond\n" + _text([COMMAND_LINES[2], "third \xe9"]).encode() + b"a prompt: ")
    os.close(source_write)
    forward_without_notices(source_read, target_write, COMMAND_NOTICES, partial_wait=0.05)
    os.close(target_write)
    assert os.read(target_read, 1 << 16).decode() == "first\nsecond\nthird \xe9\na prompt: "


FILTERED = """
import os, sys, time
from keras_albert.utils.native_notices import stderr_filtered
with stderr_filtered():
    os.write(2, {lines!r}.encode())
    print("from Python", file=sys.stderr, flush=True)
    {end}
"""


@pytest.mark.parametrize("end, shown", [
    ("pass", ""),
    # A native crash: the filter process outlives the command and passes
    # its last lines on.
    ("os.abort()", ""),
    ("raise SystemExit('a fatal error, said once')", "a fatal error, said once\n"),
])
def test_a_filtered_command_shows_every_real_line_even_when_it_dies(end, shown):
    lines = _text([STARTUP_LINES[0], "a real warning", *COMMAND_LINES, "another real line"])
    # keras_albert skips its TensorFlow import while sys.argv is ["-m"] (as for
    # `python -m`): the filter alone is under test.
    script = "import sys; sys.argv = ['-m']; import keras_albert; sys.argv = ['x']\n" + FILTERED.format(
        lines=lines, end=end)
    result = _run(["-c", script])
    assert result.stderr == "a real warning\nanother real line\nfrom Python\n" + shown
