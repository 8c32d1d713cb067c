"""Converts ALBERT weights between formats and checks the outputs agree.

Makes a small random Hugging Face `AlbertForPreTraining` (no download),
converts it to a keras_albert preset with `python -m keras_albert convert`,
compares MLM and SOP logits, then writes it back as Hugging Face and
keras-hub directories. Needs `pip install "keras-albert[test]"`
(transformers, torch==2.13.0).

    python examples/convert_checkpoints.py --output runs/convert_example
"""

import argparse
import pathlib

import numpy as np
import torch
import transformers

import keras_albert
from keras_albert.cli.main import main as cli


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="runs/convert_example")
    output = pathlib.Path(parser.parse_args().output)
    output.mkdir(parents=True, exist_ok=True)

    torch.manual_seed(0)
    config = transformers.AlbertConfig(
        vocab_size=100, embedding_size=16, hidden_size=32, num_hidden_layers=4,
        num_hidden_groups=2, num_attention_heads=4, intermediate_size=64,
    )
    hf_model = transformers.AlbertForPreTraining(config).eval()
    hf_model.save_pretrained(output / "hf_source")

    cli(["convert", "--from=hf", f"--src={output / 'hf_source'}",
         f"--dst={output / 'preset'}"])
    ours = keras_albert.AlbertPretrainer.from_preset(str(output / "preset"))

    token_ids = np.array([[2, 11, 12, 13, 14, 3, 0, 0]], "int32")
    padding = (token_ids != 0).astype("int32")
    with torch.no_grad():
        theirs = hf_model(
            input_ids=torch.tensor(token_ids), attention_mask=torch.tensor(padding)
        )
    mine = ours.predict({
        "token_ids": token_ids,
        "segment_ids": np.zeros_like(token_ids),
        "padding_mask": padding,
        "mask_positions": np.arange(8, dtype="int32")[None],
    }, verbose=0)
    print("max |MLM difference|:",
          np.abs(mine["mlm"] - theirs.prediction_logits.numpy()).max())
    print("max |SOP difference|:",
          np.abs(mine["sentence_order"] - theirs.sop_logits.numpy()).max())

    cli(["convert", "--from=keras_albert", "--to=hf",
         f"--src={output / 'preset'}", f"--dst={output / 'hf_again'}"])
    cli(["convert", "--from=keras_albert", "--to=keras_hub",
         f"--src={output / 'preset'}", f"--dst={output / 'keras_hub'}"])


if __name__ == "__main__":
    main()
