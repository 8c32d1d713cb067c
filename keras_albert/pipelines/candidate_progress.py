"""Resume a grid of fine-tuning candidates after the candidate that finished last.

A row of the long-document protocol fits 8 candidates of up to 15 minutes
each on a CPU before it reads the test passages once, for the one the
carve-out chose. A run stopped between candidates (a session's end, a kill)
would otherwise fit them all again. `CandidateProgress` keeps, in one
directory, the rows of the candidates fitted so far and the weights of the
best of them, so the next run goes on from there and ends with what an
unbroken run would have (each candidate seeds itself, so skipping earlier
ones changes nothing).

Files: `progress.json` (the candidates' identities, the fitted rows and
the best index) and `best.weights.h5`. The weights are written before the
rows that point at them, both atomically, so a kill at any moment leaves a
consistent pair.
"""

import json
import pathlib

from keras_albert.utils.atomic_file import write_file_atomically

PROGRESS_FILE = "progress.json"
WEIGHTS_FILE = "best.weights.h5"


def candidate_identity(settings):
    """What a fitted row depends on, comparable across runs."""
    return repr(settings)


class CandidateProgress:
    """The fitted candidates of one grid, kept in `directory`."""

    def __init__(self, directory):
        self.directory = pathlib.Path(directory)

    @property
    def weights_path(self):
        return self.directory / WEIGHTS_FILE

    def load(self, candidates):
        """(fitted rows, best index or None) recorded for exactly these
        `candidates`; ([], None) when nothing is, or the grid differs."""
        path = self.directory / PROGRESS_FILE
        if not path.exists():
            return [], None
        recorded = json.loads(path.read_text())
        identities = [candidate_identity(c) for c in candidates]
        if recorded.get("candidates") != identities:
            print(f"{path}: progress of another grid; starting this one afresh", flush=True)
            return [], None
        best = recorded.get("best")
        if best is not None and not self.weights_path.exists():
            print(f"{self.weights_path} is missing; starting the grid afresh", flush=True)
            return [], None
        return recorded["fitted"], best

    def save(self, candidates, fitted, best, classifier=None):
        """Records `fitted` rows; `classifier` (the new best, if any)
        first, so the rows never point at weights not yet on disk."""
        self.directory.mkdir(parents=True, exist_ok=True)
        if classifier is not None:
            partial = self.directory / ("partial." + WEIGHTS_FILE)
            classifier.save_weights(str(partial))
            partial.replace(self.weights_path)
        record = {"candidates": [candidate_identity(c) for c in candidates], "fitted": fitted, "best": best}
        write_file_atomically(self.directory / PROGRESS_FILE, json.dumps(record, indent=1) + "\n")

    def clear(self):
        """Removes the files once the grid's row is recorded elsewhere."""
        for name in (PROGRESS_FILE, WEIGHTS_FILE):
            (self.directory / name).unlink(missing_ok=True)
        if self.directory.exists() and not any(self.directory.iterdir()):
            self.directory.rmdir()
