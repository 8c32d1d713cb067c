"""Running a command or a check in the test process where a child process
would only add its start-up (seconds of TensorFlow's import)."""

import inspect
import json
import os
import pathlib
import subprocess
import sys

import keras

ROOT = pathlib.Path(__file__).resolve().parents[1]


def command_in_this_process(arguments, capsys):
    """`python -m keras_albert ARGUMENTS` as `main(argv)` in this process:
    (exit status, stdout, stderr)."""
    from keras_albert.cli.main import main

    capsys.readouterr()
    status = main(arguments)
    out, err = capsys.readouterr()
    return status, out, err


def on_tensorflow(function, *arguments):
    """`function(*arguments)` on the TensorFlow backend, its result through
    JSON: called here when this process's backend is TensorFlow, else in a
    TensorFlow process (Keras picks its backend once per process).
    `function` is a module-level function; its arguments arrive as strings."""
    arguments = [str(argument) for argument in arguments]
    if keras.config.backend() == "tensorflow":
        return json.loads(json.dumps(function(*arguments)))
    # By its file: pytest imports a test module under its bare name.
    module = ".".join(pathlib.Path(inspect.getfile(function)).resolve().relative_to(ROOT).with_suffix("").parts)
    script = (
        f"import json, sys; from {module} import {function.__name__} as function; "
        "print(json.dumps(function(*sys.argv[1:])))"
    )
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    result = subprocess.run(
        [sys.executable, "-c", script, *arguments],
        capture_output=True, text=True, timeout=600, env=env, cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])
