"""Every `>>>` example in keras_albert's docstrings runs and prints what it says.

One case per module. Each module's examples run in a namespace holding the
module's own globals plus ``np``, ``tf``, ``keras`` and ``keras_albert``;
examples that need files or the network are marked ``# doctest: +SKIP``.
"""

import doctest
import importlib
import importlib.util
import pkgutil

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_albert

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _modules_with_examples():
    names = []
    for info in pkgutil.walk_packages(keras_albert.__path__, "keras_albert."):
        spec = importlib.util.find_spec(info.name)
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            continue
        with open(spec.origin, encoding="utf-8") as source:
            if ">>>" in source.read():
                names.append(info.name)
    return sorted(names)


MODULES = _modules_with_examples()


def test_examples_are_found():
    # ~50 modules carry examples; a broken walk must not pass vacuously.
    assert len(MODULES) > 30


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    module = importlib.import_module(name)
    monkeypatch.chdir(tmp_path)  # examples that write files write here
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    namespace = {"np": np, "tf": tf, "keras": keras, "keras_albert": keras_albert}
    tests = [t for t in finder.find(module, name, module=module) if t.examples]
    assert tests, f"{name} mentions '>>>' but no example was found"
    failures = []
    for test in tests:
        test.globs = {**module.__dict__, **namespace}
        report = []
        result = runner.run(test, out=report.append, clear_globs=True)
        if result.failed:
            failures.append("".join(report))
    assert not failures, "\n".join(failures)
