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

if TYPE_CHECKING:
    from flarekit._products import CREATED_FROM as CREATED_FROM
    from flarekit._products import KUEUE_GROUP as KUEUE_GROUP
    from flarekit._products import KUEUE_VERSIONS as KUEUE_VERSIONS
    from flarekit._products import KueueVersion as KueueVersion
    from flarekit.client._client import Client as Client
    from flarekit.client._client import FieldValidation as FieldValidation
    from flarekit.client._client import PatchType as PatchType
    from flarekit.client._client import PropagationPolicy as PropagationPolicy
    from flarekit.client._components import wrapped_templates as wrapped_templates
    from flarekit.client._config import Credentials as Credentials
    from flarekit.client._config import current_credentials as current_credentials
    from flarekit.client._config import from_kubeconfig as from_kubeconfig
    from flarekit.client._config import from_token as from_token
    from flarekit.client._config import in_cluster as in_cluster
    from flarekit.client._config import login as login
    from flarekit.client._config import logout as logout
    from flarekit.client._discovery import APIGroupList as APIGroupList
    from flarekit.client._discovery import ServerVersion as ServerVersion
    from flarekit.client._discovery import read_document as read_document
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
    from flarekit.client._errors import NotServed as NotServed
    from flarekit.client._errors import Operation as Operation
    from flarekit.client._errors import ServerError as ServerError
    from flarekit.client._errors import Unauthorized as Unauthorized
    from flarekit.client._facts import ServedGroup as ServedGroup
    from flarekit.client._facts import ServerFacts as ServerFacts
    from flarekit.client._generic import GenericResource as GenericResource
    from flarekit.client._generic import generic_resource as generic_resource
    from flarekit.client._head import head_of as head_of
    from flarekit.client._input_files import InputError as InputError
    from flarekit.client._input_files import InputTooLarge as InputTooLarge
    from flarekit.client._input_files import decode as decode
    from flarekit.client._input_files import load_text as load_text
    from flarekit.client._input_files import read_file as read_file
    from flarekit.client._limits import ReadLimits as ReadLimits
    from flarekit.client._list import ListIterator as ListIterator
    from flarekit.client._pods import PodInfo as PodInfo
    from flarekit.client._pods import check_log_options as check_log_options
    from flarekit.client._pods import follow_logs as follow_logs
    from flarekit.client._pods import list_pods as list_pods
    from flarekit.client._pods import read_logs as read_logs
    from flarekit.client._portforward import PortForward as PortForward
    from flarekit.client._portforward import PortForwardError as PortForwardError
    from flarekit.client._resource import ALL_NAMESPACES as ALL_NAMESPACES
    from flarekit.client._retry import RetryPolicy as RetryPolicy
    from flarekit.client._served import get_bytes as get_bytes
    from flarekit.client._served import get_json as get_json
    from flarekit.client._served import preferred_kueue_version as preferred_kueue_version
    from flarekit.client._served import preferred_version as preferred_version
    from flarekit.client._served import served_versions as served_versions
    from flarekit.client._warnings import InsecureConnectionWarning as InsecureConnectionWarning
    from flarekit.client._warnings import ServerWarning as ServerWarning
    from flarekit.client._watch import Watch as Watch
    from flarekit.client._watch import WatchEvent as WatchEvent

__getattr__, __dir__, __all__ = lazy_module(
    globals(),
    {
        "flarekit._products": ("CREATED_FROM", "KUEUE_GROUP", "KUEUE_VERSIONS", "KueueVersion"),
        "flarekit.client._client": (
            "Client",
            "FieldValidation",
            "PatchType",
            "PropagationPolicy",
        ),
        "flarekit.client._components": ("wrapped_templates",),
        "flarekit.client._config": (
            "Credentials",
            "current_credentials",
            "from_kubeconfig",
            "from_token",
            "in_cluster",
            "login",
            "logout",
        ),
        "flarekit.client._discovery": (
            "APIGroupList",
            "ServerVersion",
            "read_document",
        ),
        "flarekit.client._dropped": (
            "PrunedFields",
            "PrunedFieldsWarning",
        ),
        "flarekit.client._errors": (
            "AlreadyExists",
            "ApiError",
            "ApiUnavailable",
            "Cause",
            "Conflict",
            "Forbidden",
            "Gone",
            "Invalid",
            "KubeconfigError",
            "NotFound",
            "NotServed",
            "Operation",
            "ServerError",
            "Unauthorized",
        ),
        "flarekit.client._generic": (
            "GenericResource",
            "generic_resource",
        ),
        "flarekit.client._head": ("head_of",),
        "flarekit.client._input_files": (
            "InputError",
            "InputTooLarge",
            "decode",
            "load_text",
            "read_file",
        ),
        "flarekit.client._limits": ("ReadLimits",),
        "flarekit.client._list": ("ListIterator",),
        "flarekit.client._portforward": ("PortForward", "PortForwardError"),
        "flarekit.client._pods": (
            "PodInfo",
            "check_log_options",
            "follow_logs",
            "list_pods",
            "read_logs",
        ),
        "flarekit.client._resource": ("ALL_NAMESPACES",),
        "flarekit.client._retry": ("RetryPolicy",),
        "flarekit.client._facts": ("ServedGroup", "ServerFacts"),
        "flarekit.client._served": (
            "get_bytes",
            "get_json",
            "preferred_kueue_version",
            "preferred_version",
            "served_versions",
        ),
        "flarekit.client._warnings": (
            "InsecureConnectionWarning",
            "ServerWarning",
        ),
        "flarekit.client._watch": (
            "Watch",
            "WatchEvent",
        ),
    },
)
