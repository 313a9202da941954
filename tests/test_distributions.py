"""The four distributions agree: one version, and builds that ask for what the generator needs.

flarekit and flarekit-models run the generator from the source tree while their wheels are
built, so their build requirements must be exactly the generator's own requirements (plus the
build backend); the packaging tests build without isolation, so this is where a missing build
requirement is caught. flarekit requires the models' requirement on pydantic too.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from flarekit_generator import __version__

ROOT = Path(__file__).resolve().parents[1]


def _project(path: str) -> dict[str, Any]:
    with (ROOT / path).open("rb") as stream:
        data: dict[str, Any] = tomllib.load(stream)
    return data


def test_one_version_for_all_four() -> None:
    assert _project("pyproject.toml")["project"]["version"] == __version__
    assert _project("models/pyproject.toml")["project"]["version"] == __version__
    assert _project("testing/pyproject.toml")["project"]["version"] == __version__
    assert _project("generator/pyproject.toml")["project"]["dynamic"] == ["version"]


def test_builds_that_generate_require_what_the_generator_requires() -> None:
    generator = set(_project("generator/pyproject.toml")["project"]["dependencies"])
    for path in ("pyproject.toml", "models/pyproject.toml"):
        requires = set(_project(path)["build-system"]["requires"])
        assert requires == generator | {"hatchling>=1.25"}, path


def test_the_models_require_pydantic_alone_and_flarekit_the_same_pydantic() -> None:
    models = _project("models/pyproject.toml")["project"]["dependencies"]
    assert models == ["pydantic>=2.11,<3"]
    assert models[0] in _project("pyproject.toml")["project"]["dependencies"]


def test_the_testing_extra_is_the_testing_distribution_of_this_release() -> None:
    testing = _project("testing/pyproject.toml")["project"]
    assert f"flarekit=={__version__}" in testing["dependencies"]
    extras = _project("pyproject.toml")["project"]["optional-dependencies"]
    assert extras["testing"] == [f"flarekit-testing=={__version__}"]
