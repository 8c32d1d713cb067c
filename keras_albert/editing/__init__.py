"""Changing a built backbone: longer positions, more weight groups, an LSH
warm start, and the weight copy they share."""
