"""What ``python -m build`` makes of a clean clone, and how an sdist builds on its own.

- flarekit's wheel carries ``flarekit`` and the generated ``flarekit_models``, never the
  generator; flarekit-models' wheel carries the models alone and requires pydantic alone;
  flarekit-generator's wheel carries the generator with the lock file and the models' runtime
  modules it copies.
- An sdist builds offline into the same wheel (file for file) when a mirror holds the pinned
  CRDs, and fails naming the missing files and how to provide them when nothing does.
"""

from __future__ import annotations

import sys
import tarfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging_support import Dists, build, clean_env, requirements, run, wheel_files

from flarekit_generator import __version__
from flarekit_generator.lockfile import read_lock

# Builds and installs take minutes on a busy machine; the shared fixtures' setup counts too.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]


def _top_level(wheel: Path) -> set[str]:
    return {path.split("/", 1)[0] for path in wheel_files(wheel)}


def _runtime_names(wheel: Path) -> set[str]:
    """The distributions a plain install of ``wheel`` requires (extras left out)."""
    parsed = [Requirement(text) for text in requirements(wheel)]
    return {
        str(canonicalize_name(r.name))
        for r in parsed
        if r.marker is None or r.marker.evaluate({"extra": ""})
    }


def test_the_flarekit_wheel_holds_flarekit_and_the_models_but_not_the_generator(
    dists: Dists,
) -> None:
    files = wheel_files(dists.flarekit_wheel)
    assert _top_level(dists.flarekit_wheel) == {
        "flarekit",
        "flarekit_models",
        "flarekit-0.1.0.dist-info",
    }
    for needed in (
        "flarekit/py.typed",
        "flarekit_models/py.typed",
        "flarekit_models/_base.py",
        "flarekit_models/ray/v1/__init__.py",
        "flarekit_models/_data/fields.json.gz",
    ):
        assert needed in files, needed
    crd_data = {p for p in files if p.startswith("flarekit_models/_data/crds/")}
    pinned = {f"flarekit_models/_data/crds/{e.family}@{e.tag}.json.gz" for e in read_lock()}
    assert crd_data == pinned
    assert not [p for p in files if "flarekit_generator" in p or p.endswith(".j2")]
    # No emulator, simulated operator or control-plane file: flarekit.testing is the
    # deprecation shim that re-exports flarekit_testing, and nothing else.
    assert not [p for p in files if p.startswith("flarekit_testing/")]
    shim = {p for p in files if p.startswith("flarekit/testing/")}
    assert shim == {"flarekit/testing/__init__.py", "flarekit/testing/pytest_plugin.py"}, shim
    assert _runtime_names(dists.flarekit_wheel) == {
        "pydantic",
        "kubernetes",
        "pyyaml",
        "cel-python",
        "websocket-client",
    }


def test_the_testing_wheel_holds_the_backends_and_requires_this_flarekit(dists: Dists) -> None:
    files = wheel_files(dists.testing_wheel)
    assert _top_level(dists.testing_wheel) == {
        "flarekit_testing",
        "flarekit_testing-0.1.0.dist-info",
    }
    for part in ("apiserver", "operators", "local", "controlplane"):
        assert f"flarekit_testing/{part}/__init__.py" in files, part
    assert "flarekit_testing/py.typed" in files
    assert "flarekit_testing/pytest_plugin.py" in files
    assert not [p for p in files if p.startswith(("flarekit/", "flarekit_models/"))]
    assert sorted(requirements(dists.testing_wheel)) == [
        "cryptography>=42",
        "flarekit==0.1.0",
        "pyyaml>=6.0",
        "ray[default]<3,>=2.60; extra == 'local'",
    ]


def test_the_models_wheel_holds_the_models_alone_and_requires_pydantic_alone(
    dists: Dists,
) -> None:
    assert _top_level(dists.models_wheel) == {"flarekit_models", "flarekit_models-0.1.0.dist-info"}
    assert requirements(dists.models_wheel) == ["pydantic<3,>=2.11"]
    # The same generated files as in flarekit's wheel: one generator, one lock, same bytes.
    ours = {
        p: h for p, h in wheel_files(dists.models_wheel).items() if p.startswith("flarekit_models/")
    }
    theirs = {
        p: h
        for p, h in wheel_files(dists.flarekit_wheel).items()
        if p.startswith("flarekit_models/")
    }
    assert ours == theirs


def test_the_generator_wheel_ships_its_lock_file_runtime_and_templates(dists: Dists) -> None:
    files = wheel_files(dists.generator_wheel)
    assert _top_level(dists.generator_wheel) == {
        "flarekit_generator",
        f"flarekit_generator-{__version__}.dist-info",
    }
    for needed in (
        "flarekit_generator/crds.lock.tsv",
        "flarekit_generator/runtime/_base.py",
        "flarekit_generator/runtime/_types.py",
        "flarekit_generator/templates/classes.py.j2",
    ):
        assert needed in files, needed
    assert _runtime_names(dists.generator_wheel) == {
        "jinja2",
        "kubernetes-validate",
        "ruff",
        "pyyaml",
    }


def test_the_sdists_carry_what_a_wheel_is_built_from_and_no_schemas(dists: Dists) -> None:
    for sdist, needed in (
        (
            dists.flarekit_sdist,
            {
                "generator/flarekit_generator/pipeline.py",
                "schemas/crds.lock.tsv",
                "models/models_hook.py",
                "models/runtime/_base.py",
                "src/flarekit/__init__.py",
            },
        ),
        (
            dists.models_sdist,
            {
                "generator/flarekit_generator/pipeline.py",
                "schemas/crds.lock.tsv",
                "models_hook.py",
                "runtime/_base.py",
            },
        ),
        (
            dists.generator_sdist,
            {"flarekit_generator/crds.lock.tsv", "flarekit_generator/runtime/_base.py"},
        ),
        (
            dists.testing_sdist,
            {"flarekit_testing/__init__.py", "flarekit_testing/apiserver/_server.py"},
        ),
    ):
        with tarfile.open(sdist) as archive:
            names = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
        assert needed <= names, (sdist.name, sorted(needed - names))
        assert not [n for n in names if n.endswith(".yaml") or "/cache/" in n], sdist.name
        assert not [n for n in names if n.startswith(("tests/", "generated/", ".venv/"))]


def _unpack(sdist: Path, into: Path) -> Path:
    with tarfile.open(sdist) as archive:
        archive.extractall(into, filter="data")
    return into / sdist.name.removesuffix(".tar.gz")


def test_an_sdist_builds_the_same_wheel_offline_from_a_mirror(
    dists: Dists, mirror: Path, tmp_path: Path
) -> None:
    tree = _unpack(dists.models_sdist, tmp_path / "src")
    offline = clean_env(
        SCHEMA_MIRROR=str(mirror),
        FLAREKIT_SCHEMA_CACHE=str(tmp_path / "empty-cache"),
        FLAREKIT_SCHEMA_OFFLINE="1",
    )
    [wheel] = build(tree, tmp_path / "out", offline, what=("--wheel",))
    assert wheel.name == dists.models_wheel.name
    assert wheel_files(wheel) == wheel_files(dists.models_wheel)
    assert len(list((tmp_path / "empty-cache").rglob("*.yaml"))) == len(read_lock())


def test_an_sdist_without_the_pinned_files_fails_naming_what_is_missing(
    dists: Dists, tmp_path: Path
) -> None:
    tree = _unpack(dists.flarekit_sdist, tmp_path / "src")
    offline = clean_env(
        SCHEMA_MIRROR=str(tmp_path / "no-mirror"),
        FLAREKIT_SCHEMA_CACHE=str(tmp_path / "empty-cache"),
        FLAREKIT_SCHEMA_OFFLINE="1",
    )
    command = [sys.executable, "-m", "build", "--no-isolation", "--wheel"]
    done = run(
        [*command, "--outdir", str(tmp_path / "out"), str(tree)], cwd=tree, env=offline, check=False
    )
    assert done.returncode != 0
    output = done.stdout + done.stderr
    assert "flarekit-models: the models are generated at build time" in output
    assert f"{len(read_lock())} pinned schema file(s) neither cached nor in" in output
    assert "kuberay/v1.7.0/ray.io_rayclusters.yaml" in output
    assert "Point SCHEMA_MIRROR at a directory of the pinned files" in output
    assert not list((tmp_path / "out").glob("*.whl"))
