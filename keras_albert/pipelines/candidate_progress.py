"""Resume a grid of fine-tuning candidates after the candidate that finished last.

A row of the long-document protocol fits 8 candidates of up to 20 minutes
each on a CPU. A run stopped between candidates (a session's end, a kill)
would otherwise fit them all again, and a fresh checkout has none of the
last machine's files. So the progress is plain data, small enough to live
in the committed results file: the candidates' identities, the rows fitted
so far, the index of the carve-out's leader and the leader's test scores
(`tune_long_document_row` scores a leader while its weights are in memory;
a later, better candidate replaces those scores). No weights are needed to
go on, and the run ends with what an unbroken one would have (each
candidate seeds itself, so skipping earlier ones changes nothing).
"""

import copy


def candidate_identity(settings):
    """What a fitted row depends on, comparable across runs."""
    return repr(settings)


class CandidateProgress:
    """The fitted candidates of one grid.

    Args:
        recorded: what an earlier run's `snapshot()` returned (a dict), or
            None to start afresh.
        persist: called with each new snapshot as soon as a candidate is
            fitted (e.g. to write it into the results file), or None.
    """

    def __init__(self, recorded=None, persist=None):
        self.recorded = copy.deepcopy(recorded) if recorded else None
        self.persist = persist

    def load(self, candidates):
        """(fitted rows, leader index, leader's test scores) recorded for
        exactly these `candidates`; ([], None, None) when nothing is, or
        the grid differs."""
        if not self.recorded:
            return [], None, None
        identities = [candidate_identity(c) for c in candidates]
        if self.recorded.get("candidates") != identities:
            print("the recorded progress is of another grid; starting this one afresh", flush=True)
            return [], None, None
        best, scores = self.recorded.get("best"), self.recorded.get("best_test_scores")
        if best is not None and not scores:
            print("the recorded progress has no test scores for its leader; starting the grid afresh",
                  flush=True)
            return [], None, None
        return copy.deepcopy(self.recorded["fitted"]), best, copy.deepcopy(scores)

    def save(self, candidates, fitted, best, best_test_scores):
        """Records the rows fitted so far and the leader, then persists."""
        self.recorded = {
            "candidates": [candidate_identity(c) for c in candidates],
            "fitted": copy.deepcopy(fitted),
            "best": best,
            "best_test_scores": copy.deepcopy(best_test_scores),
        }
        if self.persist is not None:
            self.persist(self.snapshot())

    def snapshot(self):
        """The progress as JSON-ready data (None before any save)."""
        return copy.deepcopy(self.recorded)
