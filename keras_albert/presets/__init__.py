"""The bundled presets, shipped as package data (one directory each), and
the code that resolves, checks and saves presets.

`preset_resolution` finds the bundled ones through `importlib.resources`.
This package sits below `models/`, which calls it.
"""
