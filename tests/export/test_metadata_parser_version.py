"""The minimum metadata parser version stands in for mediapipe's missing helper."""

import importlib
import sys

import flatbuffers
import pytest
from mediapipe.tasks.metadata import metadata_schema_py_generated as fb

from keras_albert.export import metadata_parser_version
from keras_albert.export.metadata_parser_version import ensure_metadata_version_helper
from keras_albert.export.metadata_parser_version import minimum_parser_version


def _buffer(subgraph=None, model_files=None):
    metadata = fb.ModelMetadataT()
    metadata.name = "m"
    if subgraph is not None:
        metadata.subgraphMetadata = [subgraph]
    metadata.associatedFiles = model_files
    builder = flatbuffers.Builder(0)
    builder.Finish(metadata.Pack(builder), b"M001")
    return bytes(builder.Output())


def _file(kind=fb.AssociatedFileType.TENSOR_AXIS_LABELS, version=None):
    file = fb.AssociatedFileT()
    file.name, file.type, file.version = "f", kind, version
    return file


def _unit(options_type):
    unit = fb.ProcessUnitT()
    unit.optionsType = options_type
    unit.options = {
        fb.ProcessUnitOptions.SentencePieceTokenizerOptions: fb.SentencePieceTokenizerOptionsT,
        fb.ProcessUnitOptions.BertTokenizerOptions: fb.BertTokenizerOptionsT,
        fb.ProcessUnitOptions.RegexTokenizerOptions: fb.RegexTokenizerOptionsT,
        fb.ProcessUnitOptions.ScoreThresholdingOptions: fb.ScoreThresholdingOptionsT,
    }[options_type]()
    return unit


def _subgraph(**members):
    subgraph = fb.SubGraphMetadataT()
    tensor = fb.TensorMetadataT()
    tensor.name = "t"
    for name, value in members.pop("tensor", {}).items():
        setattr(tensor, name, value)
    subgraph.inputTensorMetadata = [tensor]
    for name, value in members.items():
        setattr(subgraph, name, value)
    return subgraph


def _audio_content():
    content = fb.ContentT()
    content.contentPropertiesType = fb.ContentProperties.AudioProperties
    content.contentProperties = fb.AudioPropertiesT()
    return content


def _group():
    group = fb.TensorGroupT()
    group.name, group.tensorNames = "g", ["t"]
    return group


def _custom():
    custom = fb.CustomMetadataT()
    custom.name, custom.data = "c", [1, 2]
    return custom


P = fb.ProcessUnitOptions


@pytest.mark.parametrize("buffer, expected", [
    (_buffer(), "1.0.0"),
    (_buffer(_subgraph(tensor={"associatedFiles": [_file()]})), "1.0.0"),
    (_buffer(_subgraph(tensor={"processUnits": [_unit(P.ScoreThresholdingOptions)]})), "1.0.0"),
    (_buffer(_subgraph(tensor={"associatedFiles": [_file(fb.AssociatedFileType.VOCABULARY)]})), "1.0.1"),
    (_buffer(model_files=[_file(fb.AssociatedFileType.VOCABULARY)]), "1.0.1"),
    (_buffer(_subgraph(inputProcessUnits=[_unit(P.SentencePieceTokenizerOptions)])), "1.1.0"),
    (_buffer(_subgraph(inputProcessUnits=[])), "1.1.0"),  # present, even empty
    (_buffer(_subgraph(tensor={"processUnits": [_unit(P.BertTokenizerOptions)]})), "1.1.0"),
    (_buffer(_subgraph(outputTensorGroups=[_group()])), "1.2.0"),
    (_buffer(_subgraph(tensor={"processUnits": [_unit(P.RegexTokenizerOptions)]})), "1.2.1"),
    (_buffer(_subgraph(tensor={"content": _audio_content()})), "1.3.0"),
    (_buffer(_subgraph(associatedFiles=[_file(fb.AssociatedFileType.SCANN_INDEX_FILE)])), "1.4.0"),
    (_buffer(_subgraph(tensor={"associatedFiles": [_file(version="2")]})), "1.4.1"),
    (_buffer(_subgraph(customMetadata=[_custom()],
                       inputProcessUnits=[_unit(P.SentencePieceTokenizerOptions)])), "1.5.0"),
])
def test_each_schema_member_sets_its_version(buffer, expected):
    assert minimum_parser_version(buffer) == expected


def test_a_buffer_that_is_not_metadata_is_refused():
    with pytest.raises(ValueError, match="not a TFLite ModelMetadata flatbuffer"):
        minimum_parser_version(b"\x00" * 16)
    with pytest.raises(ValueError, match="ModelMetadata"):
        minimum_parser_version(_buffer(_subgraph())[:12])


def test_the_stand_in_makes_the_writers_importable_and_a_real_helper_wins(monkeypatch):
    ensure_metadata_version_helper()
    writer = importlib.import_module("mediapipe.tasks.python.metadata.metadata_writers.metadata_writer")
    buffer = _buffer(_subgraph(inputProcessUnits=[_unit(P.SentencePieceTokenizerOptions)]))
    assert writer.metadata._pywrap_metadata_version.GetMinimumMetadataParserVersion(buffer) == "1.1.0"
    # The wheel without the compiled helper gets ours; one that has it keeps it.
    real = type(sys)("real_helper")
    monkeypatch.setitem(sys.modules, metadata_parser_version._HELPER, real)
    ensure_metadata_version_helper()
    assert sys.modules[metadata_parser_version._HELPER] is real
