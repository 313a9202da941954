"""The clusters the walkthrough can run on without one of the user's: the practice cluster
(FakeCluster with simulated operators) and the real stack (a real control plane with the real
operators), both from the flarekit-testing distribution, an extra of flarekit.

Loaded on first use, so that the walkthrough on a user's cluster (and the ``flarekit``
command) needs no more than flarekit; the first use without the extra says what to install.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flarekit._lazy import lazy_module

if TYPE_CHECKING:
    from flarekit.walkthrough.backends._practice import ensure_torch as ensure_torch
    from flarekit.walkthrough.backends._practice import leftovers as leftovers
    from flarekit.walkthrough.backends._practice import (
        start_practice_cluster as start_practice_cluster,
    )
    from flarekit.walkthrough.backends._realstack import OPERATORS as OPERATORS
    from flarekit.walkthrough.backends._realstack import start_real_stack as start_real_stack
    from flarekit.walkthrough.backends._realstack import stop_real_stack as stop_real_stack
    from flarekit.walkthrough.backends._realstack import why_no_real_node as why_no_real_node

_public, __dir__, __all__ = lazy_module(
    globals(),
    {
        "flarekit.walkthrough.backends._practice": (
            "ensure_torch",
            "leftovers",
            "start_practice_cluster",
        ),
        "flarekit.walkthrough.backends._realstack": (
            "OPERATORS",
            "start_real_stack",
            "stop_real_stack",
            "why_no_real_node",
        ),
    },
)

#: The distribution that holds the backends.
TESTING = "flarekit_testing"


def __getattr__(name: str) -> Any:
    try:
        return _public(name)
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] != TESTING:
            raise
        raise RuntimeError(
            f"the walkthrough's practice cluster and real stack need the flarekit-testing "
            f"distribution ({exc.name} is missing): pip install 'flarekit[testing]' (from a "
            "clone: pip install ./testing), or point the walkthrough at a real cluster with "
            "--kubeconfig"
        ) from None
