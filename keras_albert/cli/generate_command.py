"""Continue prompts with a causal LM preset (AlbertCausalLM), GPT-2 style.

  python -m keras_albert generate --preset=runs/causal_lm_preset \\
      --prompt="It is a truth universally acknowledged"
  python -m keras_albert generate --preset=runs/causal_lm_preset \\
      --prompt="Emma" --prompt="Mr. Darcy" --sampler=top_p --top_p=0.9 \\
      --temperature=0.8 --seed=1 --max_length=48

Each --prompt (repeat it for a batch) is continued until the tokenizer's
end token or --max_length tokens (prompt included; default the preset's
sequence length), and printed on its own line in order. --sampler is one
of keras-hub's: top_k (--top_k; the default, as in keras-hub), top_p
(--top_p), random or greedy (which repeats itself on small models), each
dividing the logits by --temperature; the random ones draw from --seed, so
a run prints the same text again until --seed changes. Decoding keeps a key/value cache;
--nouse_cache recomputes the whole window per token (same tokens,
slower). Empty prompts, prompts longer than the model's window,
--max_length not above a prompt and temperatures <= 0 are refused in one
line before anything is generated.
"""

import dataclasses

from absl import flags

from keras_albert.pipelines.generation_settings import SAMPLERS
from keras_albert.pipelines.generation_settings import GenerateSettings
from keras_albert.pipelines.generation_settings import check_generate_settings

HELP = "continue prompts with a causal LM preset (greedy, top-k, top-p sampling)"


def define_flags(flag_values):
    defaults = GenerateSettings(preset="", prompts=())
    fv = flag_values
    flags.DEFINE_string("preset", None, "AlbertCausalLM preset directory or name (required)",
                        required=True, flag_values=fv)
    flags.DEFINE_multi_string("prompt", None, "text to continue; repeat for several (required)",
                              required=True, flag_values=fv)
    flags.DEFINE_integer("max_length", defaults.max_length,
                         "tokens per result, prompt included (default: the preset's sequence length)",
                         flag_values=fv)
    flags.DEFINE_enum("sampler", defaults.sampler, SAMPLERS, "how the next token is picked", flag_values=fv)
    flags.DEFINE_float("temperature", defaults.temperature, "logits are divided by it (> 0)", flag_values=fv)
    flags.DEFINE_integer("top_k", defaults.top_k, "candidates kept by --sampler=top_k", flag_values=fv)
    flags.DEFINE_float("top_p", defaults.top_p, "probability mass kept by --sampler=top_p", flag_values=fv)
    flags.DEFINE_integer("seed", defaults.seed, "seed of the random samplers", flag_values=fv)
    flags.DEFINE_boolean("use_cache", defaults.use_cache, "decode with the key/value cache", flag_values=fv)
    flags.DEFINE_boolean("strip_prompt", defaults.strip_prompt, "print only the new text", flag_values=fv)


def settings_from(flag_values):
    values = {
        field.name: flag_values[field.name].value
        for field in dataclasses.fields(GenerateSettings)
        if field.name != "prompts"
    }
    return GenerateSettings(prompts=tuple(flag_values.prompt), **values)


def check_inputs(flag_values):
    """Before TensorFlow is imported: the prompts and sampler settings."""
    check_generate_settings(settings_from(flag_values))


def results_on_stdout(flag_values):
    return True


def run(flag_values):
    from keras_albert.pipelines.generation import generate_texts

    for text in generate_texts(settings_from(flag_values)):
        print(text, flush=True)
