"""Checks on what users hand to task models (raw texts, packed features,
labels, datasets), before anything reaches a tf.data map or a compiled
step, so a wrong input fails with a message that names it. Below `models/`,
which mixes them into every task."""
