"""Ray clusters described in a few parameters, rendered to KubeRay objects offline.

``ClusterConfiguration`` holds what a user wants (CodeFlare SDK parameter names),
validates all of it at once (:class:`ConfigError` lists every problem), and renders to a
``RayCluster`` (ray.io/v1), optionally wrapped in an ``AppWrapper``, as typed models, dicts
or YAML, without credentials or a cluster. :func:`from_raycluster` reads a configuration
back from an existing object.
"""

from flarekit._validation import ConfigError, Problem, ValidationReport
from flarekit.cluster._config import ClusterConfiguration, WorkerGroup
from flarekit.cluster._read import from_raycluster
from flarekit.cluster._render import (
    render,
    render_appwrapper,
    render_raycluster,
    to_dict,
    to_yaml,
)

__all__ = [
    "ClusterConfiguration",
    "ConfigError",
    "Problem",
    "ValidationReport",
    "WorkerGroup",
    "from_raycluster",
    "render",
    "render_appwrapper",
    "render_raycluster",
    "to_dict",
    "to_yaml",
]
