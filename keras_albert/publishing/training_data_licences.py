"""What the bundled and official presets were trained on, with each
source's licence, for the model card of them and of models made from them.

Facts only, from `keras_albert/datasets/data/PROVENANCE.md`,
`keras_albert/presets/README.md` and the ALBERT paper; a preset not listed
here gets no data or licence claim from this module.
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class DataSource:
    name: str
    licence: str
    role: str = "training text"


AUSTEN = DataSource("Jane Austen's six novels (Project Gutenberg transcriptions; Persuasion held out)",
                    "public domain")
WORDNET_GLOSSES = DataSource(
    "WordNet 3.0 glosses (Princeton University)",
    "WordNet 3.0 licence (permissive, with Princeton's copyright notice kept; full text in "
    "`WORDNET_LICENSE`)")
KJV = DataSource("The King James Version of the Bible (1611)", "public domain")
DICTIONARIES = DataSource(
    "GCIDE (Webster's 1913 dictionary) and FOLDOC lines", "GPL-2+ (the 1913 text itself is public domain)",
    "word-level distillation targets")
MINILM = DataSource("sentence-transformers/all-MiniLM-L6-v2", "Apache-2.0",
                    "a teacher at build time only; not contained in the weights' files")
SUPERSENSE_LABELS = DataSource(
    "WordNet 3.0 noun supersenses (glosses labelled by lexicographer file, split 80/10/10 by synset)",
    WORDNET_GLOSSES.licence, "labelled task data")
DICTIONARY_TEXT = DataSource(
    "GCIDE (Webster's 1913 dictionary) and FOLDOC entries", DICTIONARIES.licence, "training text")
DOCUMENTATION = DataSource(
    "The prose of Python's, Perl's and Git's documentation, the Debian Administrator's Handbook and "
    "the Rust books (Debian packages python3.11-doc, perl-doc, git-doc, debian-handbook, rust-doc)",
    "respectively: PSF License; GPL-1+ or Artistic; GPL-2; GPL-2+ or CC-BY-SA-3.0; MIT or Apache-2.0")
ALBERT_V2_DATA = DataSource(
    "BookCorpus and English Wikipedia, as the ALBERT paper reports",
    "Wikipedia text: CC BY-SA; BookCorpus: no licence published with it")

_TINY = (AUSTEN, WORDNET_GLOSSES, KJV, DICTIONARIES, MINILM, DICTIONARY_TEXT, DOCUMENTATION)
PRESET_DATA = {
    "albert_tiny_en": _TINY,
    "albert_tiny_causal_en": (AUSTEN, WORDNET_GLOSSES, KJV, DICTIONARY_TEXT, DOCUMENTATION),
    "albert_tiny_en_student": (AUSTEN, WORDNET_GLOSSES),
    "albert_tiny_en_student_supersense": (AUSTEN, WORDNET_GLOSSES, SUPERSENSE_LABELS),
    **{name: (ALBERT_V2_DATA,) for name in (
        "albert_base_en_uncased", "albert_large_en_uncased", "albert_extra_large_en_uncased",
        "albert_extra_extra_large_en_uncased")},
}
# The weights a model made from these presets started from, and their licence.
PRESET_WEIGHTS_LICENCE = {
    **{name: f"`{name}`, whose weights ship with keras_albert under Apache-2.0"
       for name in ("albert_tiny_en", "albert_tiny_causal_en", "albert_tiny_en_student",
                    "albert_tiny_en_student_supersense")},
    **{name: f"`{name}`, Google's ALBERT v2 weights, under Apache-2.0" for name in (
        "albert_base_en_uncased", "albert_large_en_uncased", "albert_extra_large_en_uncased",
        "albert_extra_extra_large_en_uncased")},
}


def uses_wordnet(sources):
    return any(source.licence == WORDNET_GLOSSES.licence for source in sources)
