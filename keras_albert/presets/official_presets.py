"""The official ALBERT v2 English models, where they are published, and the
descriptions of the bundled presets.

Data only; it sits in `presets/` so preset resolution (below `models/`) can
read it. `keras_albert.models.albert_presets` is its keras-hub-style name.
"""

# Shared by the four v2 models (Google's albert_config.json).
_V2_COMMON = dict(
    vocabulary_size=30000,
    embedding_dim=128,
    max_sequence_length=512,
    num_segments=2,
    num_groups=1,
    num_inner_repetitions=1,
    dropout=0.0,
    activation="gelu_approximate",
)


def _v2(num_layers, hidden_dim, num_heads, intermediate_dim):
    return dict(
        _V2_COMMON,
        num_layers=num_layers,
        hidden_dim=hidden_dim,
        num_heads=num_heads,
        intermediate_dim=intermediate_dim,
    )


OFFICIAL_PRESETS = {
    "albert_base_en_uncased": {
        "description": "ALBERT-base v2, 12 layers, H=768, all layers shared.",
        "params": 11683584,
        "config": _v2(12, 768, 12, 3072),
        "kaggle_handle": "kaggle://keras/albert/keras/albert_base_en_uncased/5",
        "hf_handle": "hf://albert/albert-base-v2",
    },
    "albert_large_en_uncased": {
        "description": "ALBERT-large v2, 24 layers, H=1024, all layers shared.",
        "params": 17683968,
        "config": _v2(24, 1024, 16, 4096),
        "kaggle_handle": "kaggle://keras/albert/keras/albert_large_en_uncased/3",
        "hf_handle": "hf://albert/albert-large-v2",
    },
    "albert_extra_large_en_uncased": {
        "description": "ALBERT-xlarge v2, 24 layers, H=2048, all layers shared.",
        "params": 58724864,
        "config": _v2(24, 2048, 16, 8192),
        "kaggle_handle": (
            "kaggle://keras/albert/keras/albert_extra_large_en_uncased/3"
        ),
        "hf_handle": "hf://albert/albert-xlarge-v2",
    },
    "albert_extra_extra_large_en_uncased": {
        "description": "ALBERT-xxlarge v2, 12 layers, H=4096, all shared.",
        "params": 222595584,
        "config": _v2(12, 4096, 64, 16384),
        "kaggle_handle": (
            "kaggle://keras/albert/keras/albert_extra_extra_large_en_uncased/3"
        ),
        "hf_handle": "hf://albert/albert-xxlarge-v2",
    },
}

# Other spellings users bring from Hugging Face and Google's release.
PRESET_ALIASES = {
    alias: name
    for name, size in (
        ("albert_base_en_uncased", "base"),
        ("albert_large_en_uncased", "large"),
        ("albert_extra_large_en_uncased", "xlarge"),
        ("albert_extra_extra_large_en_uncased", "xxlarge"),
    )
    for alias in (
        f"albert-{size}-v2",
        f"albert/albert-{size}-v2",
        f"albert_{size}_v2",
    )
}

# The presets shipped in `keras_albert/presets/` (see its README.md).
BUNDLED_PRESET_DESCRIPTIONS = {
    "albert_tiny_en": (
        "4-layer ALBERT (H=256, E=128, all layers shared, 8,000-piece uncased "
        "vocabulary) pretrained with MLM + SOP on Austen, WordNet glosses and "
        "the King James Bible, with word-level distillation from "
        "all-MiniLM-L6-v2, then on a GPU on 524M tokens of a larger English "
        "corpus (dictionaries, software documentation); MLM and SOP heads included."
    ),
    "albert_tiny_causal_en": (
        "GPT-2-style causal LM of albert_tiny_en's shape (4 layers sharing one "
        "block, H=256, E=128, tied output embedding) and vocabulary, trained "
        "from random weights on 2 CPU cores for next-token prediction on the "
        "project's English corpus (Persuasion held out); for AlbertCausalLM "
        "and `generate`."
    ),
    "albert_tiny_en_student": (
        "MobileBERT-style student (trigram embedding, bottleneck blocks, "
        "H=128) distilled from the bundled albert_tiny_en; 4.66x fewer parameters."
    ),
    "albert_tiny_en_student_supersense": (
        "albert_tiny_en_student after task distillation: a classifier of "
        "the 26 WordNet noun supersenses."
    ),
}
