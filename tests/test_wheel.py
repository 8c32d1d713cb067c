"""The built wheel and sdist carry the bundled presets and corpora, and a
bundled preset loads from the installed wheel alone: a fresh process, the
source tree and the editable install out of reach, no network."""

import json
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import textwrap
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PRESET = "albert_tiny_en_student_supersense"
TEXT = "a small domesticated carnivorous mammal with soft fur"
BUNDLED_PRESETS = ("albert_tiny_en", "albert_tiny_en_student", PRESET)
PRESET_FILES = ("config.json", "metadata.json", "model.weights.h5", "task.json",
                "task.weights.h5", "tokenizer.json", "preprocessor.json",
                "assets/tokenizer/vocabulary.spm")
# Left out of the copy the distributions are built from: what a checkout
# may hold besides the sources.
_NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "runs", "*.egg-info", "__pycache__",
    ".pytest_cache", ".hypothesis")


def _bundled_data_files():
    data = ROOT / "keras_albert" / "datasets" / "data"
    return sorted(f"keras_albert/datasets/data/{p.name}" for p in data.iterdir() if p.is_file())


def _expected_package_files():
    files = [f"keras_albert/presets/{name}/{f}" for name in BUNDLED_PRESETS for f in PRESET_FILES]
    # The default preset's pretraining curve travels with it (its model card).
    curve = "keras_albert/presets/albert_tiny_en/pretraining_curve.png"
    return files + [curve, "keras_albert/presets/README.md"] + _bundled_data_files()


def _build(source, kind, output):
    """Runs setuptools' PEP 517 hook, as pip and `python -m build` do; returns
    the built file and what the build printed."""
    result = subprocess.run(
        [sys.executable, "-c",
         f"from setuptools import build_meta; build_meta.build_{kind}({str(output)!r})"],
        cwd=source, check=True, capture_output=True, text=True, timeout=300)
    (built,) = output.glob("*.whl" if kind == "wheel" else "*.tar.gz")
    return built, result.stdout + result.stderr


@pytest.fixture(scope="module")
def distributions(tmp_path_factory):
    work = tmp_path_factory.mktemp("dist")
    source = work / "source"
    shutil.copytree(ROOT, source, ignore=_NOT_SOURCES)
    sdist, sdist_log = _build(source, "sdist", work / "sdist")
    wheel, wheel_log = _build(source, "wheel", work / "wheel")
    return wheel, sdist, work, sdist_log + wheel_log


@pytest.mark.large
def test_wheel_carries_presets_and_corpora_and_no_tests(distributions):
    wheel, _, _, _ = distributions
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = sorted(set(_expected_package_files()) - names)
    assert not missing, f"missing from {wheel.name}: {missing}"
    assert "keras_albert/presets/__init__.py" in names
    strays = sorted(n for n in names if n.startswith(("tests/", "saved_models/", "tools/"))
                    or "/tests/" in n or "saved_models" in n or "__pycache__" in n)
    assert not strays, strays
    # Every file is inside the package or its metadata.
    assert all(n.startswith(("keras_albert/", "keras_albert-")) for n in names)
    licence = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
    assert licence, "the wheel carries no LICENSE"
    assert b"Apache License" in zipfile.ZipFile(wheel).read(licence[0])


@pytest.mark.large
def test_building_warns_about_no_package_layout(distributions):
    # Every user who installs from the sdist or the checkout sees these.
    *_, log = distributions
    warnings = [line for line in log.splitlines()
                if "is absent from the `packages` configuration" in line]
    assert not warnings, "\n".join(warnings[:5])


@pytest.mark.large
def test_sdist_carries_presets_and_corpora(distributions):
    _, sdist, _, _ = distributions
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    missing = sorted(set(_expected_package_files()) - names)
    assert not missing, f"missing from {sdist.name}: {missing}"


# Run in a fresh interpreter: `-I` ignores PYTHONPATH, the user site and the
# current directory, `-S` skips site-packages' .pth files (among them the
# editable install of the checkout); the installed wheel comes first on the
# path and the environment's site-packages (dependencies) last.
_CHILD = textwrap.dedent("""
    import json, os, socket, sys
    target, site_packages = sys.argv[1], sys.argv[2]
    sys.path.insert(0, target)
    sys.path.append(site_packages)

    def no_network(*args, **kwargs):
        raise OSError("network disabled in this test")

    socket.create_connection = no_network
    socket.getaddrinfo = no_network
    socket.socket.connect = no_network

    import keras_albert
    from keras_albert import datasets
    from keras_albert.presets.preset_resolution import resolve_preset

    classifier = keras_albert.AlbertClassifier.from_preset({preset!r})
    logits = classifier.predict([{text!r}], verbose=0)
    print(json.dumps({{
        "module": keras_albert.__file__,
        "preset_dir": os.path.realpath(resolve_preset({preset!r})),
        "editable_finder": any("editable" in m for m in sys.modules),
        "logits": logits.tolist(),
        "persuasion_paragraphs": len(datasets.load_austen_novel("persuasion")),
        "bundled": list(keras_albert.list_presets()),
        "discovered": list(keras_albert.models.AlbertTextClassifier.presets),
    }}))
""").format(preset=PRESET, text=TEXT)


@pytest.mark.large
def test_bundled_preset_loads_from_the_installed_wheel_offline(distributions):
    import numpy as np

    import keras_albert

    wheel, _, work, _ = distributions
    target = work / "installed"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         "--target", str(target), str(wheel)],
        check=True, capture_output=True, timeout=300)
    site_packages = sysconfig.get_paths()["purelib"]  # the dependencies
    home = work / "home"
    home.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "KERAS_BACKEND": "tensorflow",
           "TF_CPP_MIN_LOG_LEVEL": "2", "KERAS_ALBERT_CACHE": str(home / "cache")}
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-c", _CHILD, str(target), site_packages],
        cwd=home, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])

    target = str(target.resolve())
    assert report["module"].startswith(target), report["module"]
    assert report["preset_dir"].startswith(target), report["preset_dir"]
    assert not report["editable_finder"]
    assert set(BUNDLED_PRESETS) <= set(report["bundled"])
    assert set(BUNDLED_PRESETS) <= set(report["discovered"])
    assert report["persuasion_paragraphs"] > 100
    # The same model as the checkout's copy of the preset.
    here = keras_albert.AlbertClassifier.from_preset(PRESET).predict([TEXT], verbose=0)
    np.testing.assert_allclose(report["logits"], here, atol=1e-5)
