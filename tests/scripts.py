"""The repository's scripts (tools/, benchmarks/) as modules: they are no
package, so tests load them from their files."""

import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load_script(relative_path):
    """The module of the script at `relative_path` (from the repository root),
    named after its file."""
    path = ROOT / relative_path
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
