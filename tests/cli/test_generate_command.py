"""`python -m keras_albert generate`: continuations on stdout, the same as
the Python API, and bad input refused in one line with nothing generated."""

import keras
import pytest

from keras_albert import AlbertBackbone
from keras_albert import AlbertCausalLM
from keras_albert import AlbertCausalLMPreprocessor
from keras_albert import AlbertTokenizer
from keras_albert.cli.main import main
from keras_albert.pipelines.generation import generate_texts
from keras_albert.pipelines.generation_settings import GenerateSettings


@pytest.fixture(scope="module")
def preset(tmp_path_factory, sentencepiece_proto):
    keras.utils.set_random_seed(0)
    tokenizer = AlbertTokenizer(proto=sentencepiece_proto)
    backbone = AlbertBackbone(
        vocabulary_size=tokenizer.vocabulary_size(), num_layers=2, num_heads=2,
        embedding_dim=8, hidden_dim=16, intermediate_dim=32, max_sequence_length=24,
        causal=True,
    )
    model = AlbertCausalLM(backbone, AlbertCausalLMPreprocessor(tokenizer, sequence_length=16))
    path = tmp_path_factory.mktemp("causal") / "preset"
    model.save_to_preset(str(path))
    return str(path)


def test_prompts_continued_on_stdout_as_the_api_does(preset, capsys):
    arguments = ["--prompt=the cat", "--prompt=emma walks to the", "--max_length=12",
                 "--sampler=top_p", "--top_p=0.8", "--temperature=0.7", "--seed=4"]
    assert main(["generate", f"--preset={preset}", *arguments]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("the cat") and lines[1].startswith("emma walks to the")
    assert "Generating for 2 prompt(s)" in err
    settings = GenerateSettings(preset=preset, prompts=("the cat", "emma walks to the"), max_length=12,
                                sampler="top_p", top_p=0.8, temperature=0.7, seed=4)
    assert generate_texts(settings) == lines


def test_greedy_with_and_without_cache_print_the_same(preset, capsys):
    outputs = []
    for flag in ("--use_cache", "--nouse_cache"):
        assert main(["generate", f"--preset={preset}", "--prompt=the dog", "--max_length=12",
                     "--sampler=greedy", flag]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] and outputs[0].startswith("the dog")


def test_the_default_is_keras_hubs_top_k_drawn_from_seed_zero(preset, capsys):
    # Greedy decoding, the default once, loops on small models.
    runs = []
    for _ in range(2):
        assert main(["generate", f"--preset={preset}", "--prompt=the dog", "--max_length=12"]) == 0
        runs.append(capsys.readouterr().out)
    assert runs[0] == runs[1]
    settings = GenerateSettings(preset=preset, prompts=("the dog",), max_length=12, sampler="top_k", top_k=5, seed=0)
    assert generate_texts(settings) == runs[0].splitlines()


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--prompt=  "], "Prompt 0 is empty"),
        (["--prompt=" + "the cat sees the dog " * 8, "--max_length=20"], "more than the model's window of 24"),
        (["--prompt=emma walks to the river", "--max_length=4"], "must exceed every prompt's length"),
        (["--prompt=the cat", "--max_length=99"], "between 2 and the model's 24 positions"),
        (["--prompt=the cat", "--temperature=-0.5"], "`temperature` must be a finite number > 0.0"),
        (["--prompt=the cat", "--top_p=1.5"], "`top_p` must be a float in"),
        (["--prompt=the cat", "--sampler=beam"], "--sampler"),
    ],
)
def test_bad_input_is_one_line_and_nothing_generated(preset, capsys, arguments, message):
    assert main(["generate", f"--preset={preset}", *arguments]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert message in err
    assert [line for line in err.splitlines() if line.startswith("error") or "Error" in line] == [
        err.strip().splitlines()[-1]
    ]
    assert "Generating" not in err


def test_a_preset_without_tokenizer_is_refused(tmp_path, capsys):
    backbone = AlbertBackbone(vocabulary_size=30, num_layers=1, num_heads=1, embedding_dim=4,
                              hidden_dim=4, intermediate_dim=8, max_sequence_length=8, causal=True)
    AlbertCausalLM(backbone).save_to_preset(str(tmp_path / "bare"))
    assert main(["generate", f"--preset={tmp_path / 'bare'}", "--prompt=the cat"]) == 2
    assert "has no tokenizer" in capsys.readouterr().err
