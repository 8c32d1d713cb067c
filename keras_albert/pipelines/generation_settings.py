"""What `generate_texts` takes, and the checks that need no model; imports
nothing heavy, so the CLI reads the defaults for its flags and checks its
inputs before TensorFlow is imported."""

import dataclasses

from keras_albert.presets.preset_kind import check_preset_known
from keras_albert.presets.preset_kind import local_preset_or_none
from keras_albert.presets.preset_kind import preset_backbone_config
from keras_albert.presets.preset_kind import task_class_name
from keras_albert.utils.validation import check_choice
from keras_albert.utils.validation import check_finite_number
from keras_albert.utils.validation import check_number_in
from keras_albert.utils.validation import check_positive_int

# keras-hub's samplers by their keras-hub names (`keras_hub.samplers`).
SAMPLERS = ("greedy", "top_k", "top_p", "random")


@dataclasses.dataclass
class GenerateSettings:
    """Everything `python -m keras_albert generate` takes (see its --help).

    Example:

    ```python
    from keras_albert.pipelines.generation import generate_texts
    from keras_albert.pipelines.generation_settings import GenerateSettings

    texts = generate_texts(GenerateSettings(
        preset="runs/causal_lm_preset", prompts=("It is a truth",),
        sampler="top_p", top_p=0.9, temperature=0.8, max_length=40))
    ```
    """

    # An AlbertCausalLM preset with a tokenizer (directory or name).
    preset: str
    # Texts to continue; generated together, as one batch.
    prompts: tuple
    # Tokens per result, prompt included; None: the preset's sequence length.
    max_length: int = None
    # "greedy", "top_k", "top_p" or "random". top_k is keras-hub's default;
    # greedy loops on small models ("and the first of the first, and ...").
    sampler: str = "top_k"
    # Divides the logits before sampling (< 1 sharper, > 1 flatter).
    temperature: float = 1.0
    # Candidates kept by top_k.
    top_k: int = 5
    # Probability mass kept by top_p.
    top_p: float = 0.9
    # Seed of the random samplers: the same text on each run; None: a
    # different draw each run.
    seed: int = 0
    # Decode with the key/value cache (False recomputes the window per token).
    use_cache: bool = True
    # Return only the new text, not the prompt before it.
    strip_prompt: bool = False


def check_generate_settings(settings):
    """One ValueError line for the first bad setting."""
    if isinstance(settings.prompts, str) or not settings.prompts:
        raise ValueError(
            "`prompts` must hold at least one prompt (a list of texts). "
            f"Received: prompts={settings.prompts!r}"
        )
    for number, prompt in enumerate(settings.prompts):
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError(
                f"Prompt {number} is empty; every prompt needs some text to "
                f"continue. Received: {prompt!r}"
            )
    check_choice("sampler", settings.sampler, SAMPLERS)
    check_finite_number("temperature", settings.temperature, 0.0, strictly_greater=True)
    check_positive_int("top_k", settings.top_k)
    check_number_in("top_p", settings.top_p, 0.0, 1.0, high_inclusive=True)
    if settings.top_p == 0:
        raise ValueError("`top_p` must be above 0 (it keeps that much probability). Received: top_p=0")
    if settings.max_length is not None:
        check_positive_int("max_length", settings.max_length)
    if settings.seed is not None:
        check_finite_number("seed", settings.seed)
    check_preset_known(settings.preset)
    _check_causal_preset(settings.preset)
    return settings


def _check_causal_preset(preset):
    """A local or bundled preset that is a bidirectional encoder is refused
    from its config.json, before Keras is imported (a downloaded one is
    refused once loaded, by AlbertCausalLM)."""
    directory = local_preset_or_none(preset)
    if directory is None:
        return  # resolving it names the problem
    if preset_backbone_config(directory).get("causal") is False:
        task = task_class_name(directory)
        holds = f"holds {task}, " if task else ""
        raise ValueError(
            f"`preset` {str(preset)!r} {holds}a bidirectional encoder (causal=False in its config.json): it "
            "cannot continue text. Pass a causal LM preset: the bundled 'albert_tiny_causal_en', or "
            "one that `pretrain --objective=causal_lm` writes."
        )
