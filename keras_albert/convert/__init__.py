"""Checkpoint converters. Every format is mapped to and from the variable
names of Google's TF1 release (see `tf1_names`), the one hub format."""
