"""README.md's `KERAS_BACKEND=jax python examples/other_backends.py` block,
as pasted (on fewer glosses), fine-tunes the bundled preset on JAX with
TensorFlow unimportable, and learns (beats the majority class)."""

import pathlib
import re

import pytest

from tests.test_readme_blocks import readme_shell_block
from tests.test_readme_blocks import run_block

pytestmark = pytest.mark.large

ROOT = pathlib.Path(__file__).resolve().parents[2]
# Loaded by every Python the block starts, before its script: TensorFlow
# is then unimportable there, as on a machine without it.
BLOCK_TENSORFLOW = (
    "import sys\n"
    "import tests.tensorflow_blocked\n"
    "print('sitecustomize: tensorflow blocked', file=sys.stderr)\n"
)


def test_fine_tunes_on_jax_without_tensorflow(tmp_path):
    line, code = readme_shell_block("examples/other_backends.py")
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(BLOCK_TENSORFLOW)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    result = run_block(line, code, tmp_path, python_path=[blocker])
    assert "sitecustomize: tensorflow blocked" in result.stderr
    found = re.search(r"backend=(\w+) tensorflow_imported=(\w+) accuracy=([\d.]+)", result.stdout)
    assert found, result.stdout[-2000:]
    assert found.group(1) == "jax" and found.group(2) == "False"
    # Majority class on the noun validation glosses: 14.9 %.
    assert float(found.group(3)) > 0.2
