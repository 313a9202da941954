"""Where a cluster is reached from outside: its Ray dashboard (through a Route, an Ingress or
an HTTPRoute, else through the API server's proxy) and its Ray client server.

A package of its own because finding them reads kinds flarekit does not pin through small
models: they are defined on first use, so that `Cluster` costs nothing to import until an
address is looked up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flarekit._lazy import lazy_module

if TYPE_CHECKING:
    from flarekit.cluster._endpoints._client_url import CLIENT_PORT as CLIENT_PORT
    from flarekit.cluster._endpoints._client_url import ClientAddress as ClientAddress
    from flarekit.cluster._endpoints._client_url import (
        RayClientUnavailable as RayClientUnavailable,
    )
    from flarekit.cluster._endpoints._client_url import client_address as client_address
    from flarekit.cluster._endpoints._dashboard import (
        DEFAULT_DASHBOARD_PORT as DEFAULT_DASHBOARD_PORT,
    )
    from flarekit.cluster._endpoints._dashboard import (
        DashboardNotExposed as DashboardNotExposed,
    )
    from flarekit.cluster._endpoints._dashboard import find_dashboard_uri as find_dashboard_uri
    from flarekit.cluster._endpoints._dashboard_proxy import proxy_address as proxy_address
    from flarekit.cluster._endpoints._dashboard_proxy import (
        through_api_server as through_api_server,
    )

__getattr__, __dir__, __all__ = lazy_module(
    globals(),
    {
        "flarekit.cluster._endpoints._client_url": (
            "CLIENT_PORT",
            "ClientAddress",
            "RayClientUnavailable",
            "client_address",
        ),
        "flarekit.cluster._endpoints._dashboard": (
            "DEFAULT_DASHBOARD_PORT",
            "DashboardNotExposed",
            "find_dashboard_uri",
        ),
        "flarekit.cluster._endpoints._dashboard_proxy": ("proxy_address", "through_api_server"),
    },
)
