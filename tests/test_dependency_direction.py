"""Imports point one way: utils <- layers <- models <- data/training/export/convert <- cli."""

import ast
import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("update_build", ROOT / "tools" / "update_build.py")
_update_build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_update_build)
LIBRARIES = _update_build.LIBRARIES


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
            if parts[0] == "tensorflow":
                yield "tensorflow", node.lineno


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
            if imported == "tensorflow":
                if library == "layers":
                    violations.append(f"{path.relative_to(ROOT)}:{line} imports tensorflow (use keras.ops)")
            elif imported not in allowed and imported in LIBRARIES:
                violations.append(f"{path.relative_to(ROOT)}:{line} imports keras_albert.{imported}")
    assert not violations, "\n".join(violations)
