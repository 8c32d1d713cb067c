"""The bundled presets, shipped as package data (one directory each).

`keras_albert.models.preset_resolution` finds them through
`importlib.resources`; this package holds no code of its own.
"""
