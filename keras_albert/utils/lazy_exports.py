"""Package names imported on first use (PEP 562).

A package whose modules differ in what they import (some need TensorFlow,
some nothing heavy) lists its public names here instead of importing every
module: `import keras_albert.training` then costs nothing, and a name pulls
in only its own module.
"""

import importlib


def lazy_exports(package, exports):
    """`(__getattr__, __dir__)` for `package`, whose `exports` map each
    public name to the submodule that defines it.

    Example (in a package's `__init__.py`):
    >>> __getattr__, __dir__ = lazy_exports(__name__, {"AlbertLamb": "lamb"})  # doctest: +SKIP
    """

    def __getattr__(name):
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{exports[name]}"), name)

    def __dir__():
        return sorted(exports)

    return __getattr__, __dir__
