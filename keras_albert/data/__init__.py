"""Data preparation: vocabularies, pretraining instances, task readers."""
