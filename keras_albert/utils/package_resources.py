"""Files shipped inside the package (presets, corpora), found through
`importlib.resources` so they are read from wherever the package is
installed (a wheel in site-packages, an editable checkout), never from a
path relative to the source tree."""

import importlib.resources
import pathlib


def package_resource(package, *parts):
    """The `Traversable` for `parts` inside the importable `package`."""
    resource = importlib.resources.files(package)
    for part in parts:
        resource = resource.joinpath(part)
    return resource


def package_directory(package, *parts):
    """A real directory of the installed `package` as a `pathlib.Path`.

    Presets are directories that Keras and h5py open by path, so they need
    a file system location. Every ordinary installation (wheel, sdist,
    editable) gives one; a package imported from a zip archive does not,
    and is refused with the reason.
    """
    resource = package_resource(package, *parts)
    if not isinstance(resource, pathlib.Path):
        location = "/".join((package.replace(".", "/"),) + parts)
        raise FileNotFoundError(
            f"Package data {location!r} is not on the file system (the "
            f"package is imported from {type(resource).__name__}, e.g. a zip "
            "archive). Install keras_albert with pip so its bundled files "
            "are unpacked."
        )
    return resource


def open_package_file(package, *parts):
    """Opens a bundled file for binary reading; a clear error if missing."""
    resource = package_resource(package, *parts)
    if not resource.is_file():
        location = "/".join((package.replace(".", "/"),) + parts)
        raise FileNotFoundError(
            f"Bundled data file {location!r} is missing; the keras_albert "
            "installation is incomplete (package data not installed)."
        )
    return resource.open("rb")
