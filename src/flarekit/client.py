"""The typed Kubernetes client, its errors, and how to connect (public names only).

    from flarekit.client import Client, NotFound
    from flarekit_models.ray.v1 import RayCluster

    with Client() as client:
        cluster = client.get(RayCluster, "demo", namespace="team-a")

Everything here is also importable from `flarekit` itself.
"""

from flarekit._client import Client, FieldValidation, PatchType, PropagationPolicy
from flarekit._config import (
    Credentials,
    current_credentials,
    from_kubeconfig,
    from_token,
    in_cluster,
    login,
    logout,
)
from flarekit._dropped import PrunedFields, PrunedFieldsWarning
from flarekit._errors import (
    AlreadyExists,
    ApiError,
    ApiUnavailable,
    Cause,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    KubeconfigError,
    NotFound,
    ServerError,
    Unauthorized,
)
from flarekit._list import ListIterator
from flarekit._resource import ALL_NAMESPACES
from flarekit._retry import RetryPolicy
from flarekit._warnings import InsecureConnectionWarning, ServerWarning
from flarekit._watch import Watch, WatchEvent

__all__ = [
    "ALL_NAMESPACES",
    "AlreadyExists",
    "ApiError",
    "ApiUnavailable",
    "Cause",
    "Client",
    "Conflict",
    "Credentials",
    "FieldValidation",
    "Forbidden",
    "Gone",
    "InsecureConnectionWarning",
    "Invalid",
    "KubeconfigError",
    "ListIterator",
    "NotFound",
    "PatchType",
    "PropagationPolicy",
    "PrunedFields",
    "PrunedFieldsWarning",
    "RetryPolicy",
    "ServerError",
    "ServerWarning",
    "Unauthorized",
    "Watch",
    "WatchEvent",
    "current_credentials",
    "from_kubeconfig",
    "from_token",
    "in_cluster",
    "login",
    "logout",
]
