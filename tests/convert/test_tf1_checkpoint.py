"""Google's TF1 release layout (albert_config.json, model.ckpt-*, .model)
converts with equal outputs; malformed releases fail whole and write nothing.

TF1 checkpoints are written and read with TensorFlow: those tests skip
without it; hostile archives are refused on every backend, and a release
without TensorFlow names what to install:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/convert/test_tf1_checkpoint.py
"""

import io
import json
import tarfile

import numpy as np
import pytest

from keras_albert.convert.albert_config import albert_config_to_ours
from keras_albert.convert.converted_preset import load_preset_model
from keras_albert.convert.huggingface import hf_state_to_tf1
from keras_albert.convert.tf1_checkpoint import convert_tf1_checkpoint
from keras_albert.utils.backend import TensorFlowRequiredError
from keras_albert.utils.backend import tensorflow_available
from tests.convert.hf_reference import TOLERANCE
from tests.convert.hf_reference import hf_model
from tests.convert.hf_reference import hf_outputs
from tests.convert.hf_reference import our_outputs

if tensorflow_available():
    import tensorflow as tf
needs_tensorflow = pytest.mark.skipif(not tensorflow_available(),
                                      reason="TF1 checkpoints are written and read with TensorFlow")

# Keys the published albert_config.json files carry besides the model's.
RELEASE_EXTRAS = {
    "net_structure_type": 0,
    "gap_size": 0,
    "num_memory_blocks": 0,
    "down_scale_factor": 1,
    "layers_to_keep": [],
}


def write_checkpoint(prefix, weights):
    """A TF1 checkpoint with Google's names, Adam slots and global_step."""
    graph = tf.Graph()
    with graph.as_default():
        for name, array in weights.items():
            tf.compat.v1.get_variable(name, initializer=np.asarray(array, "float32"))
            for slot in ("adam_m", "adam_v"):
                tf.compat.v1.get_variable(
                    f"{name}/{slot}", initializer=np.zeros(np.shape(array), "float32")
                )
        tf.compat.v1.train.get_or_create_global_step()
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            saver.save(session, str(prefix))


def write_release(directory, model, sentencepiece_proto, drop=(), reshape=()):
    directory.mkdir(parents=True)
    hf_config = model.config.to_dict()
    config = {
        key: hf_config[key]
        for key in (
            "vocab_size", "embedding_size", "hidden_size", "num_hidden_layers",
            "num_hidden_groups", "inner_group_num", "num_attention_heads",
            "intermediate_size", "hidden_dropout_prob",
            "attention_probs_dropout_prob", "max_position_embeddings",
            "type_vocab_size", "initializer_range",
        )
    }
    # Google's "gelu" is the tanh form (Hugging Face's "gelu_new").
    config.update(hidden_act="gelu", **RELEASE_EXTRAS)
    (directory / "albert_config.json").write_text(json.dumps(config))
    state = {k: v.numpy() for k, v in model.state_dict().items()}
    weights = hf_state_to_tf1(state, albert_config_to_ours(hf_config, "hf"))
    for name in drop:
        weights.pop(name)
    for name in reshape:
        weights[name] = np.zeros((3, 3), "float32")
    write_checkpoint(directory / "model.ckpt-best", weights)
    (directory / "30k-clean.model").write_bytes(sentencepiece_proto)
    return directory


@pytest.fixture(scope="module")
def model():
    return hf_model(groups=2, inner=2)


def assert_same_outputs(model, preset):
    ours = load_preset_model(preset)
    theirs, mine = hf_outputs(model), our_outputs(ours)
    assert np.abs(theirs["mlm"] - mine["mlm"]).max() <= TOLERANCE
    assert np.abs(theirs["sop"] - mine["sop"]).max() <= TOLERANCE
    return ours


@needs_tensorflow
def test_release_directory_converts_with_equal_outputs(tmp_path, model, sentencepiece_proto):
    release = write_release(tmp_path / "albert_base", model, sentencepiece_proto)
    convert_tf1_checkpoint(release, tmp_path / "preset")
    ours = assert_same_outputs(model, tmp_path / "preset")
    assert ours.backbone.num_groups == 2 and ours.backbone.num_inner_repetitions == 2
    assert (tmp_path / "preset" / "assets" / "tokenizer" / "vocabulary.spm").read_bytes() == (
        sentencepiece_proto
    )


@pytest.mark.large
@needs_tensorflow
def test_published_tarball_converts(tmp_path, model, sentencepiece_proto):
    release = write_release(tmp_path / "albert_base", model, sentencepiece_proto)
    archive = tmp_path / "albert_base_v2.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(release, arcname="albert_base")
    convert_tf1_checkpoint(archive, tmp_path / "preset")
    assert_same_outputs(model, tmp_path / "preset")


@needs_tensorflow
def test_every_problem_is_reported_at_once_and_nothing_is_written(
    tmp_path, model, sentencepiece_proto
):
    release = write_release(
        tmp_path / "release", model, sentencepiece_proto,
        drop=["bert/pooler/dense/kernel", "cls/predictions/output_bias"],
        reshape=["bert/embeddings/word_embeddings"],
    )
    with pytest.raises(ValueError) as error:
        convert_tf1_checkpoint(release, tmp_path / "preset")
    message = str(error.value)
    for name in ("bert/pooler/dense/kernel", "cls/predictions/output_bias"):
        assert name in message
    assert "wrong shapes" in message and "expected (90, 8), got (3, 3)" in message
    assert not (tmp_path / "preset").exists()


@needs_tensorflow
def test_config_that_is_not_json_is_named(tmp_path, model, sentencepiece_proto):
    release = write_release(tmp_path / "release", model, sentencepiece_proto)
    (release / "albert_config.json").write_text("{vocab_size: 30000")
    with pytest.raises(ValueError, match="albert_config.json.*not valid JSON"):
        convert_tf1_checkpoint(release, tmp_path / "preset")
    assert not (tmp_path / "preset").exists()


@needs_tensorflow
def test_unsupported_architecture_variant_is_refused(tmp_path, model, sentencepiece_proto):
    release = write_release(tmp_path / "release", model, sentencepiece_proto)
    config = json.loads((release / "albert_config.json").read_text())
    (release / "albert_config.json").write_text(json.dumps(dict(config, net_structure_type=1)))
    with pytest.raises(ValueError, match="net_structure_type=1"):
        convert_tf1_checkpoint(release, tmp_path / "preset")


def _tarball(path, member_name, kind=tarfile.REGTYPE, linkname=""):
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("albert_base/albert_config.json")
        data = b"{}"
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        evil = tarfile.TarInfo(member_name)
        evil.type = kind
        evil.linkname = linkname
        payload = b"owned" if kind == tarfile.REGTYPE else b""
        evil.size = len(payload)
        tar.addfile(evil, io.BytesIO(payload))
    return path


@pytest.mark.parametrize(
    "member,kind,linkname,why",
    [
        ("../escaped.txt", tarfile.REGTYPE, "", r"\.\."),
        ("/tmp/absolute.txt", tarfile.REGTYPE, "", "absolute"),
        ("albert_base/link", tarfile.SYMTYPE, "/etc/passwd", "link"),
        ("albert_base/link", tarfile.SYMTYPE, "../../outside", "link"),
        ("albert_base/device", tarfile.CHRTYPE, "", "device"),
    ],
)
def test_hostile_tarballs_are_refused(tmp_path, member, kind, linkname, why):
    archive = _tarball(tmp_path / "evil.tar.gz", member, kind, linkname)
    with pytest.raises(ValueError, match=why) as error:
        convert_tf1_checkpoint(archive, tmp_path / "out" / "preset")
    assert member in str(error.value)
    assert not (tmp_path / "escaped.txt").exists()
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(tensorflow_available(), reason="what a machine without TensorFlow answers")
def test_without_tensorflow_a_release_says_what_to_install(tmp_path):
    release = tmp_path / "release"
    release.mkdir()
    config = dict(vocab_size=30, embedding_size=8, hidden_size=16, num_hidden_layers=1,
                  num_attention_heads=2, intermediate_size=32, hidden_act="gelu",
                  max_position_embeddings=16, type_vocab_size=2, **RELEASE_EXTRAS)
    (release / "albert_config.json").write_text(json.dumps(config))
    (release / "model.ckpt-best.index").write_bytes(b"")
    with pytest.raises(TensorFlowRequiredError, match="TF1 checkpoint needs TensorFlow"):
        convert_tf1_checkpoint(release, tmp_path / "preset")
    assert not (tmp_path / "preset").exists()
