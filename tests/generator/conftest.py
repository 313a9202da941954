"""Session fixtures: the small fixture package, generated once, and a child to import it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from small_package import ModelRunner, generate

from flarekit_generator.k8s_types import KubernetesDefinitions


@pytest.fixture(scope="session")
def k8s_defs() -> KubernetesDefinitions:
    """The pinned Kubernetes OpenAPI definitions, read once."""
    return KubernetesDefinitions.load()


@pytest.fixture(scope="session")
def small_package(
    tmp_path_factory: pytest.TempPathFactory, k8s_defs: KubernetesDefinitions
) -> Path:
    """The generated ``flarekit_models`` directory of the fixture CRDs."""
    return generate(tmp_path_factory.mktemp("small"), k8s_defs)


@pytest.fixture(scope="session")
def models(small_package: Path) -> Iterator[ModelRunner]:
    """Runs snippets against the small package in a child interpreter."""
    runner = ModelRunner(small_package.parent)
    assert runner.package_dir.parent == small_package, runner.package_dir
    yield runner
    runner.close()
