"""Deprecated: use ``pytest_plugins = ["flarekit_testing.pytest_plugin"]``."""

from __future__ import annotations

import flarekit.testing  # noqa: F401  (warns, as every flarekit.testing import does)
from flarekit_testing.pytest_plugin import (
    fake_cluster,
    pytest_configure,
    simulated_operators_raised_nothing,
)

__all__ = ["fake_cluster", "pytest_configure", "simulated_operators_raised_nothing"]
