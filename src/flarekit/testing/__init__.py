"""Deprecated: the test backends moved to their own distribution, `flarekit-testing`.

Import them from `flarekit_testing` instead (``pip install 'flarekit[testing]'``, or
``pip install ./testing`` from a clone)::

    from flarekit_testing import FakeCluster, ControlPlane

This module re-exports `flarekit_testing` with a `DeprecationWarning` for one release
(flarekit 0.1.x) and will then be removed.
"""

from __future__ import annotations

import warnings

try:
    import flarekit_testing as _testing
except ImportError as exc:  # pragma: no cover - depends on what is installed
    raise ImportError(
        "flarekit.testing moved to the flarekit-testing distribution (import flarekit_testing); "
        "install it with pip install 'flarekit[testing]' (from a clone: pip install ./testing)"
    ) from exc

warnings.warn(
    "flarekit.testing is deprecated and will be removed after flarekit 0.1: "
    "import from flarekit_testing instead (same names)",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = list(_testing.__all__)
globals().update({name: getattr(_testing, name) for name in __all__})
