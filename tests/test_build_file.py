"""BUILD must name every module and test file in a Bazel target."""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _build_targets():
    tree = ast.parse((ROOT / "BUILD").read_text())
    targets = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") in (
            "py_library",
            "py_test",
        ):
            keywords = {k.arg: k.value for k in node.keywords}
            srcs = [e.value for e in keywords["srcs"].elts]
            targets.append((node.func.id, keywords["name"].value, srcs))
    return targets


def _python_files(directory):
    return {
        str(p.relative_to(ROOT))
        for p in (ROOT / directory).rglob("*.py")
        if "__pycache__" not in p.parts
    }


def test_every_module_and_test_is_in_a_target():
    covered = {src for _, _, srcs in _build_targets() for src in srcs}
    expected = _python_files("keras_albert") | _python_files("tests")
    missing = sorted(expected - covered)
    assert not missing, (
        f"Not in any BUILD target: {missing}. Run `python tools/update_build.py`."
    )


def test_build_names_no_missing_files():
    for kind, name, srcs in _build_targets():
        for src in srcs:
            assert (ROOT / src).is_file(), f"{kind} {name} names missing {src}"


def test_every_test_file_has_its_own_py_test():
    tests = {srcs[0] for kind, _, srcs in _build_targets() if kind == "py_test"}
    expected = {
        f for f in _python_files("tests") if pathlib.Path(f).name.startswith("test_")
    }
    assert tests == expected


def test_build_is_up_to_date():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "update_build", ROOT / "tools" / "update_build.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (ROOT / "BUILD").read_text() == module.render(), (
        "BUILD is stale. Run `python tools/update_build.py`."
    )
