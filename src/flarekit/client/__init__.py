"""The typed Kubernetes client, its errors, and how to connect (public names only).

    from flarekit.client import Client, NotFound
    from flarekit_models.ray.v1 import RayCluster

    with Client() as client:
        cluster = client.get(RayCluster, "demo", namespace="team-a")

Everything here is also importable from `flarekit` itself. Names load on first use, so
importing a private module of the client layer (its errors, say) loads nothing else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flarekit._lazy import lazy_module

if TYPE_CHECKING:  # the public names, listed once (read by the loader below)
    from flarekit.client._client import Client as Client
    from flarekit.client._client import FieldValidation as FieldValidation
    from flarekit.client._client import PatchType as PatchType
    from flarekit.client._client import PropagationPolicy as PropagationPolicy
    from flarekit.client._config import Credentials as Credentials
    from flarekit.client._config import current_credentials as current_credentials
    from flarekit.client._config import from_kubeconfig as from_kubeconfig
    from flarekit.client._config import from_token as from_token
    from flarekit.client._config import in_cluster as in_cluster
    from flarekit.client._config import login as login
    from flarekit.client._config import logout as logout
    from flarekit.client._dropped import PrunedFields as PrunedFields
    from flarekit.client._dropped import PrunedFieldsWarning as PrunedFieldsWarning
    from flarekit.client._errors import AlreadyExists as AlreadyExists
    from flarekit.client._errors import ApiError as ApiError
    from flarekit.client._errors import ApiUnavailable as ApiUnavailable
    from flarekit.client._errors import Cause as Cause
    from flarekit.client._errors import Conflict as Conflict
    from flarekit.client._errors import Forbidden as Forbidden
    from flarekit.client._errors import Gone as Gone
    from flarekit.client._errors import Invalid as Invalid
    from flarekit.client._errors import KubeconfigError as KubeconfigError
    from flarekit.client._errors import NotFound as NotFound
    from flarekit.client._errors import ServerError as ServerError
    from flarekit.client._errors import Unauthorized as Unauthorized
    from flarekit.client._limits import ReadLimits as ReadLimits
    from flarekit.client._list import ListIterator as ListIterator
    from flarekit.client._portforward import PortForward as PortForward
    from flarekit.client._portforward import PortForwardError as PortForwardError
    from flarekit.client._resource import ALL_NAMESPACES as ALL_NAMESPACES
    from flarekit.client._retry import RetryPolicy as RetryPolicy
    from flarekit.client._warnings import InsecureConnectionWarning as InsecureConnectionWarning
    from flarekit.client._warnings import ServerWarning as ServerWarning
    from flarekit.client._watch import Watch as Watch
    from flarekit.client._watch import WatchEvent as WatchEvent

__getattr__, __dir__ = lazy_module(globals())
