"""Imports point one way: utils <- (layers, presets) <- models <- (editing, data, training, export, convert, publishing) <- pipelines <- cli."""

import ast
import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("update_build", ROOT / "tools" / "update_build.py")
_update_build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_update_build)
LIBRARIES = _update_build.LIBRARIES
# A module that imports a backend's own library is named after the backend
# (`reversible_gradient_jax.py`) and imported only when Keras runs on it.
BACKEND_LIBRARIES = ("tensorflow", "jax", "torch")


def _allowed(library, seen=None):
    seen = set() if seen is None else seen
    for dep in LIBRARIES[library]:
        if dep not in seen:
            seen.add(dep)
            _allowed(dep, seen)
    return seen | {library}


def _imported_subpackages(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "keras_albert" and len(parts) > 1:
                yield parts[1], node.lineno
            if parts[0] in BACKEND_LIBRARIES:
                yield parts[0], node.lineno


EXISTING = [n for n in LIBRARIES if n != "cli" and (ROOT / "keras_albert" / n).is_dir()]


@pytest.mark.parametrize("library", EXISTING)
def test_library_imports_only_its_dependencies(library):
    directory = ROOT / "keras_albert" / library
    # Bundled corpora may feed any library above the model definitions.
    allowed = _allowed(library)
    if library not in ("layers", "models"):
        allowed |= {"datasets"}
    violations = []
    for path in sorted(directory.rglob("*.py")):
        for imported, line in _imported_subpackages(path):
            if imported in BACKEND_LIBRARIES:
                if library == "layers" and not path.stem.endswith(f"_{imported}"):
                    violations.append(
                        f"{path.relative_to(ROOT)}:{line} imports {imported} "
                        f"(use keras.ops, or a module named *_{imported}.py)"
                    )
            elif imported not in allowed and imported in LIBRARIES:
                violations.append(f"{path.relative_to(ROOT)}:{line} imports keras_albert.{imported}")
    assert not violations, "\n".join(violations)


# Core modules that import TensorFlow (or the TensorFlow-only export and
# serving packages) when they are imported. Each sits on a TensorFlow-only
# path (tf.data readers, tf.distribute, the fine-tuning pipeline that
# exports SavedModels) or is a backend's own module; `import keras_albert`
# and training on JAX/PyTorch never reach them (tests/backends). The list
# may only shrink.
TENSORFLOW_MODULES = {
    "keras_albert/data/pretraining_tfrecords.py",
    "keras_albert/layers/reversible_gradient_tensorflow.py",
    "keras_albert/training/keras_distribution_fixes.py",
    "keras_albert/training/strategy.py",
}
CORE = ("utils", "layers", "presets", "input_checks", "models", "editing", "data", "training",
        "distill", "pipelines", "datasets", "tokenizers")
TENSORFLOW_ONLY = ("tensorflow", "tensorflow_text", "keras_albert.export", "keras_albert.serving")


def test_core_imports_tensorflow_only_in_known_modules():
    found = set()
    for library in CORE:
        for path in sorted((ROOT / "keras_albert" / library).rglob("*.py")):
            for node in ast.parse(path.read_text()).body:  # module level only
                names = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                if any(name == prefix or name.startswith(prefix + ".") for name in names for prefix in TENSORFLOW_ONLY):
                    found.add(str(path.relative_to(ROOT)))
    assert found <= TENSORFLOW_MODULES, sorted(found - TENSORFLOW_MODULES)
    assert TENSORFLOW_MODULES <= found, f"no longer import TensorFlow, drop from the list: {sorted(TENSORFLOW_MODULES - found)}"


def test_the_command_line_goes_through_pipelines_only():
    """`keras_albert/cli/` parses flags and calls `keras_albert.pipelines`
    (plus the generic helpers of `utils`): every command is a Python API
    first."""
    allowed = set(LIBRARIES["cli"]) | {"cli"}
    assert set(LIBRARIES["cli"]) == {"pipelines", "utils"}
    violations = []
    for path in sorted((ROOT / "keras_albert" / "cli").rglob("*.py")):
        for imported, line in _imported_subpackages(path):
            if imported not in allowed and imported not in BACKEND_LIBRARIES:
                violations.append(f"{path.relative_to(ROOT)}:{line} imports keras_albert.{imported}")
    assert not violations, "\n".join(violations)
