"""`predict` with a token classifier preset: one label per word.

What `finetune --task=token_classification` writes (CoNLL NER, say) tags
texts here: each text is split into words at whitespace, as CoNLL files
hold them, and each word gets the label of its first piece
(`AlbertTokenClassifier.predict_word_labels`); words cut by the preset's
length get none.
"""

import logging

from keras_albert.models.albert_token_classifier import AlbertTokenClassifier
from keras_albert.models.albert_token_classifier_preprocessor import (
    AlbertTokenClassifierPreprocessor,
)
from keras_albert.models.length_buckets import CHUNK_BATCHES
from keras_albert.pipelines.task_preset_loading import load_task_preset
from keras_albert.utils.progress import logged_chunks
from keras_albert.utils.row_output import rows_as_text

_logger = logging.getLogger(__name__)
# The TSV's mark for a word the preset's length cut (JSON lines hold null).
CUT = "-"


class PresetTagger:
    """A token classifier preset; `rows(texts, batch_size)` tags texts."""

    def __init__(self, preset, directory, sequence_length=None):
        self.source = f"preset {preset!r}"
        self.model = load_task_preset(
            AlbertTokenClassifier, AlbertTokenClassifierPreprocessor, preset, directory, sequence_length)
        names = self.model.label_names
        self.label_names = list(names) if names else [str(i) for i in range(self.model.num_classes)]

    def rows(self, texts, batch_size):
        """One dict per text: the text, its words and each word's label
        (None where the length cut it), in the texts' order; inputs longer
        than one chunk log their progress in texts."""
        count, chunk = len(texts), batch_size * CHUNK_BATCHES
        _logger.info("Tagging %s text%s in batches of %d with the %s", f"{count:,}", "" if count == 1 else "s",
                     batch_size, self.source)
        rows = []
        for start, stop in logged_chunks(_logger, count, chunk, "Texts tagged"):
            words = [text.split() for text in texts[start:stop]]
            labels = self.model.predict_word_labels(words, batch_size=batch_size)
            for text, text_words, ids in zip(texts[start:stop], words, labels):
                rows.append({"text": text, "words": text_words,
                             "labels": [self.label_names[i] if i >= 0 else None for i in ids]})
        return rows


def format_tagged_rows(rows, output_format):
    """JSON lines, or TSV with a header: the text and its labels, one per
    word and space-separated (`-` for a word the length cut)."""
    return rows_as_text(rows, output_format, ["text", "labels"], lambda row: [
        row["text"], " ".join(CUT if label is None else label for label in row["labels"])])
