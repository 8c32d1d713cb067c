"""The oldest TFLite metadata parser that can read a metadata flatbuffer.

MediaPipe's metadata populator stamps every file with this version
(`min_parser_version`), asking a compiled helper,
`mediapipe.tasks.cc.metadata.python._pywrap_metadata_version`, for it. The
pip wheels of mediapipe (0.10.3x, 1.x; 1.2.3 checked) ship the metadata
writers but not that helper, so `metadata_writers` fails to import. Nothing
else on PyPI provides it (tflite-support 0.4.4 has its own copy but needs
protobuf < 4, which TensorFlow 2.21 cannot share a process with), so this
module computes the version from the schema's own Python classes and
stands in for the helper only when the real one is missing.

The rule, from the metadata schema's history: every member added after
schema 1.0.0 raises the minimum to the version that added it.
"""

import importlib
import sys
import types

_HELPER_PACKAGE = "mediapipe.tasks.cc.metadata.python"
_HELPER = _HELPER_PACKAGE + "._pywrap_metadata_version"
_BASE_VERSION = (1, 0, 0)
# Schema members added after 1.0.0 and the version that added them.
_ASSOCIATED_FILE_TYPE_VERSIONS = {"VOCABULARY": (1, 0, 1), "SCANN_INDEX_FILE": (1, 4, 0)}
_ASSOCIATED_FILE_VERSION_FIELD = (1, 4, 1)
_PROCESS_UNIT_VERSIONS = {
    "BertTokenizerOptions": (1, 1, 0),
    "SentencePieceTokenizerOptions": (1, 1, 0),
    "RegexTokenizerOptions": (1, 2, 1),
}
_AUDIO_PROPERTIES = (1, 3, 0)
_SUBGRAPH_MEMBER_VERSIONS = {
    "inputProcessUnits": (1, 1, 0),
    "outputProcessUnits": (1, 1, 0),
    "inputTensorGroups": (1, 2, 0),
    "outputTensorGroups": (1, 2, 0),
    "customMetadata": (1, 5, 0),
}


def _schema():
    from mediapipe.tasks.metadata import metadata_schema_py_generated

    return metadata_schema_py_generated


def _file_versions(files, schema):
    types_by_value = {
        getattr(schema.AssociatedFileType, name): version
        for name, version in _ASSOCIATED_FILE_TYPE_VERSIONS.items()
    }
    for file in files or ():
        if file.type in types_by_value:
            yield types_by_value[file.type]
        if file.version is not None:
            yield _ASSOCIATED_FILE_VERSION_FIELD


def _process_unit_versions(units, schema):
    options_by_value = {
        getattr(schema.ProcessUnitOptions, name): version
        for name, version in _PROCESS_UNIT_VERSIONS.items()
    }
    for unit in units or ():
        if unit.optionsType in options_by_value:
            yield options_by_value[unit.optionsType]


def _tensor_versions(tensor, schema):
    yield from _file_versions(tensor.associatedFiles, schema)
    yield from _process_unit_versions(tensor.processUnits, schema)
    content = tensor.content
    if content is not None and content.contentPropertiesType == schema.ContentProperties.AudioProperties:
        yield _AUDIO_PROPERTIES


def _subgraph_versions(subgraph, schema):
    for tensor in (subgraph.inputTensorMetadata or []) + (subgraph.outputTensorMetadata or []):
        yield from _tensor_versions(tensor, schema)
    yield from _file_versions(subgraph.associatedFiles, schema)
    for member, version in _SUBGRAPH_MEMBER_VERSIONS.items():
        # Present (even empty) is what counts, as in the schema's reader.
        if getattr(subgraph, member) is not None:
            yield version
    yield from _process_unit_versions(subgraph.inputProcessUnits, schema)
    yield from _process_unit_versions(subgraph.outputProcessUnits, schema)


def minimum_parser_version(metadata_buffer):
    """"MAJOR.MINOR.PATCH" of the oldest parser that reads `metadata_buffer`
    (a `ModelMetadata` flatbuffer, file identifier "M001")."""
    schema = _schema()
    buffer = bytes(metadata_buffer)
    if not schema.ModelMetadata.ModelMetadataBufferHasIdentifier(buffer, 0):
        raise ValueError("`metadata_buffer` is not a TFLite ModelMetadata flatbuffer (identifier M001).")
    try:
        metadata = schema.ModelMetadataT.InitFromPackedBuf(buffer, 0)
    except Exception as error:  # A truncated or corrupt buffer fails anywhere in the reader.
        raise ValueError(f"`metadata_buffer` is not a valid ModelMetadata flatbuffer: {error}") from None
    versions = [_BASE_VERSION]
    for subgraph in metadata.subgraphMetadata or ():
        versions.extend(_subgraph_versions(subgraph, schema))
    versions.extend(_file_versions(metadata.associatedFiles, schema))
    return ".".join(str(part) for part in max(versions))


def ensure_metadata_version_helper():
    """Makes `mediapipe`'s metadata writers importable: registers this
    module's `minimum_parser_version` as the missing compiled helper, and
    leaves a real one (a wheel that ships it) alone."""
    try:
        importlib.import_module(_HELPER)
        return
    except ImportError:
        pass
    helper = types.ModuleType(_HELPER)
    helper.__doc__ = f"Stand-in for mediapipe's compiled helper, from {__name__}."
    helper.GetMinimumMetadataParserVersion = minimum_parser_version
    package = sys.modules.get(_HELPER_PACKAGE) or types.ModuleType(_HELPER_PACKAGE)
    package._pywrap_metadata_version = helper
    sys.modules.setdefault(_HELPER_PACKAGE, package)
    sys.modules[_HELPER] = helper
