"""Continue prompts with an AlbertCausalLM preset (`python -m keras_albert
generate` runs `generate_texts`)."""

import logging

from keras_hub import samplers

from keras_albert.models.albert_causal_lm import AlbertCausalLM
from keras_albert.pipelines.generation_settings import check_generate_settings
from keras_albert.presets.preset_resolution import resolve_preset
from keras_albert.utils.progress import logged_step

_logger = logging.getLogger(__name__)


def make_sampler(name, temperature=1.0, top_k=5, top_p=0.9, seed=None):
    """The keras-hub sampler `name` with its settings."""
    if name == "greedy":
        return samplers.GreedySampler(temperature=temperature)
    if name == "top_k":
        return samplers.TopKSampler(k=top_k, seed=seed, temperature=temperature)
    if name == "top_p":
        return samplers.TopPSampler(p=top_p, seed=seed, temperature=temperature)
    if name == "random":
        return samplers.RandomSampler(seed=seed, temperature=temperature)
    raise ValueError(f"`sampler` must be greedy, top_k, top_p or random. Received: sampler={name!r}")


def generate_texts(settings):
    """The continuation of every prompt of `settings` (a `GenerateSettings`),
    in order; bad settings and prompts are refused before decoding."""
    check_generate_settings(settings)
    path = resolve_preset(settings.preset)
    with logged_step(_logger, f"Loading the causal LM preset {settings.preset!r}"):
        model = AlbertCausalLM.from_preset(path)
    if model.preprocessor is None:
        raise ValueError(
            f"Preset {settings.preset!r} has no tokenizer, so it cannot read text "
            "prompts (a converted GPT-2 holds none); call AlbertCausalLM.generate "
            "with packed token ids instead."
        )
    model.compile(
        sampler=make_sampler(
            settings.sampler, settings.temperature, settings.top_k, settings.top_p, settings.seed
        )
    )
    model.check_generate_inputs(list(settings.prompts), settings.max_length)
    with logged_step(_logger, f"Generating for {len(settings.prompts)} prompt(s)"):
        texts = model.generate(
            list(settings.prompts),
            max_length=settings.max_length,
            strip_prompt=settings.strip_prompt,
            use_cache=settings.use_cache,
        )
    return [text.decode("utf-8") if isinstance(text, bytes) else str(text) for text in texts]
