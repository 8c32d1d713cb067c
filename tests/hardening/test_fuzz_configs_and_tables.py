"""Property-based tests: hostile preset configs and hostile tables give a
result or a documented error (ValueError naming the problem), never another
exception, a crash or a hang.

Budget: 40 configs (each builds a tiny model) and 200 tables; no deadline.
Sizes stay small (ints up to 64) so a valid config builds in milliseconds.
"""

import json
import shutil

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import keras_albert
from keras_albert.data.task_files import TaskFileError
from keras_albert.data.task_files import read_text_examples

CONFIG_BUDGET = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
TABLE_BUDGET = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
MUTABLE = (
    "vocabulary_size", "num_layers", "num_heads", "embedding_dim", "hidden_dim",
    "intermediate_dim", "num_groups", "num_inner_repetitions", "sharing", "dropout",
    "max_sequence_length", "num_segments", "activation", "layer_norm_epsilon",
    "attention", "normalization", "embedding_type",
)
values = st.one_of(
    st.integers(-2, 64),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["all", "none", "ffn", "attention", "lsh", "no_norm", "factorized", "", "gelu"]),
    st.none(),
    st.booleans(),
    st.lists(st.integers(0, 4), max_size=2),
)


@pytest.fixture(scope="module")
def valid_preset(tmp_path_factory):
    path = tmp_path_factory.mktemp("valid") / "preset"
    keras_albert.AlbertBackbone(
        vocabulary_size=50, num_layers=2, num_heads=2, embedding_dim=8,
        hidden_dim=16, intermediate_dim=32, max_sequence_length=16,
    ).save_to_preset(str(path))
    return path


@pytest.mark.large
@CONFIG_BUDGET
@given(changes=st.dictionaries(st.sampled_from(MUTABLE), values, min_size=1, max_size=3))
def test_hostile_preset_config_is_a_model_or_a_value_error(valid_preset, tmp_path_factory, changes):
    preset = tmp_path_factory.mktemp("fuzz") / "preset"
    shutil.copytree(valid_preset, preset)
    config = json.loads((preset / "config.json").read_text())
    config["config"].update(changes)
    (preset / "config.json").write_text(json.dumps(config))
    try:
        backbone = keras_albert.AlbertBackbone.from_preset(str(preset), load_weights=False)
    except ValueError as error:
        assert str(error)  # Documented refusal, with a message.
        return
    rebuilt = keras_albert.AlbertBackbone.from_config(backbone.get_config())
    assert rebuilt.count_params() == backbone.count_params()


cells = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
rows = st.lists(st.lists(cells, min_size=0, max_size=4), min_size=0, max_size=6)


@TABLE_BUDGET
@given(table=rows, separator=st.sampled_from(["\t", ","]), quote=st.booleans())
def test_hostile_table_is_examples_or_a_task_file_error(tmp_path_factory, table, separator, quote):
    suffix = ".tsv" if separator == "\t" else ".csv"
    path = tmp_path_factory.mktemp("table") / f"data{suffix}"
    wrap = (lambda c: '"' + c.replace('"', '""') + '"') if quote else (lambda c: c)
    lines = ["text" + separator + "label"] + [separator.join(wrap(c) for c in row) for row in table]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        examples = read_text_examples(path)
    except TaskFileError as error:
        assert "data" + suffix in str(error)
        return
    assert len(examples.texts) == len(examples.labels) >= 1
    assert all(isinstance(text, str) for text in examples.texts)
    written = [row for row in table if row and any(row)]
    if quote and all(len(row) == 2 for row in written):
        # Quoted cells of a well-formed table read back exactly, whatever
        # they hold. A row with the wrong number of cells makes a quoted
        # TSV ambiguous with GLUE's bare quotes (see the test below).
        assert [[t, l] for t, l in zip(examples.texts, examples.labels)] == written


def test_a_quoted_tab_in_a_short_row_reads_as_glue_bare_quotes(tmp_path):
    # Found by the hypothesis test above: `"<TAB>"` under a two-column
    # header is one quoted cell (a short row) or, as GLUE writes TSVs, two
    # cells that are each a quote character. The quoted reading has a row
    # of the wrong length and the bare one does not, so the bare one is
    # kept, as for GLUE's `"hello<TAB>world"`; a row of one quoted cell
    # with no tab stays an error naming the file and the line.
    glue = tmp_path / "glue.tsv"
    glue.write_text('text\tlabel\n"\t"\n', encoding="utf-8")
    examples = read_text_examples(glue)
    assert (examples.texts, examples.labels) == (['"'], ['"'])
    short = tmp_path / "short.tsv"
    short.write_text('text\tlabel\n"a"\n', encoding="utf-8")
    with pytest.raises(TaskFileError, match=r"short\.tsv.* line 2"):
        read_text_examples(short)


def test_a_carriage_return_in_a_quoted_cell_reads_back_as_written(tmp_path):
    # Found by the hypothesis test above: text-mode reading turned a quoted
    # "\r" into "\n". Windows line endings still end rows.
    path = tmp_path / "data.csv"
    path.write_bytes(b'text,label\r\n"a\rb",x\r\n"c",y\r\n')
    examples = read_text_examples(path)
    assert (examples.texts, examples.labels) == (["a\rb", "c"], ["x", "y"])


@pytest.mark.parametrize("key", ["attention", "activation"])
@pytest.mark.parametrize("value", [[], {}, ["full"]])
def test_unhashable_names_in_a_config_are_a_value_error(key, value):
    # Found by the hypothesis test above: a list where a name belongs
    # raised TypeError (unhashable) instead of a ValueError naming the key.
    with pytest.raises(ValueError, match=key):
        keras_albert.AlbertBackbone(
            vocabulary_size=30, num_layers=1, num_heads=2, embedding_dim=8,
            hidden_dim=8, intermediate_dim=16, **{key: value})
