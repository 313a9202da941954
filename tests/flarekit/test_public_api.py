"""The public names of flarekit's client layer: a deliberate list, and a cheap import.

Changing what `flarekit` exports is an API change; this test makes it a visible one.
"""

from __future__ import annotations

import subprocess
import sys

import flarekit
import flarekit.client

PUBLIC = [
    "ALL_NAMESPACES",
    "AlreadyExists",
    "ApiError",
    "ApiUnavailable",
    "Cause",
    "Client",
    "ConfigError",
    "Conflict",
    "Credentials",
    "FieldValidation",
    "Forbidden",
    "Gone",
    "InsecureConnectionWarning",
    "Invalid",
    "ListIterator",
    "NotFound",
    "PatchType",
    "PropagationPolicy",
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


def test_public_names_are_exactly_these() -> None:
    assert sorted(flarekit.client.__all__) == sorted(PUBLIC)
    assert sorted(flarekit.__all__) == sorted(PUBLIC)


def test_every_public_name_resolves_to_the_same_object() -> None:
    for name in PUBLIC:
        assert getattr(flarekit, name) is getattr(flarekit.client, name), name


def test_unknown_attributes_still_fail() -> None:
    try:
        flarekit.NoSuchThing  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("flarekit.NoSuchThing resolved")


def test_importing_flarekit_does_not_load_the_kubernetes_package() -> None:
    code = (
        "import sys, flarekit\n"
        "assert 'kubernetes' not in sys.modules and 'pydantic' not in sys.modules\n"
        "from flarekit import Client, NotFound, RetryPolicy\n"
        "assert 'kubernetes' not in sys.modules, 'kubernetes loaded before a client exists'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
