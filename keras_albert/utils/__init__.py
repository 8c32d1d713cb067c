"""The bottom of the package: argument checks and atomic writes.

Imports nothing else of keras_albert, so every other subpackage may use it.
"""
