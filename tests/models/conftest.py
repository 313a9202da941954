"""Fixtures for the generated models: where the package and the shared samples are."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
GENERATED = REPO_ROOT / "generated" / "flarekit_models"
SAMPLES = REPO_ROOT.parent / "shared" / "samples"


@pytest.fixture(scope="session", autouse=True)
def _generated_package() -> Path:
    if not (GENERATED / "__init__.py").is_file():
        pytest.fail("generated/flarekit_models is missing: run `make generate` first")
    return GENERATED
