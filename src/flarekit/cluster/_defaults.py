"""The defaults and units a cluster configuration is read with (constants only), shared by
the configuration and its checks."""

from __future__ import annotations

from decimal import Decimal

__all__ = ["DEFAULT_IMAGE_REPOSITORY", "DEFAULT_RAY_VERSION", "MEMORY_UNIT"]

#: Ray release used when neither ``ray_version`` nor ``image`` says otherwise.
DEFAULT_RAY_VERSION = "2.47.1"
#: Where the default image comes from: ``rayproject/ray:<ray_version>``.
DEFAULT_IMAGE_REPOSITORY = "rayproject/ray"
#: A bare number of memory is gigabytes, as in CodeFlare SDK.
MEMORY_UNIT = Decimal(10) ** 9
