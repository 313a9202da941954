"""The flags that describe a Ray cluster on the command line (``flarekit cluster apply``,
``render`` and the dry runs), read into a `ClusterConfiguration`.

Why apart from `_cluster`: the dry-run commands (`_plan`) read the same flags, and the
cluster commands use the dry runs: one module each way would be a circle.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import flarekit
import flarekit.cluster
from flarekit._validation import ConfigError, Problem
from flarekit.cli._exit import UsageError
from flarekit.cli._params import check_names, key_values, load_file, merge, parse_set

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from flarekit import ClusterConfiguration

__all__ = ["GPU", "add_config_flags", "cluster_config", "config_from_args"]

GPU = "nvidia.com/gpu"


def _init_fields(cls: type[DataclassInstance]) -> list[str]:
    return [f.name for f in dataclasses.fields(cls) if f.init and f.name != "_"]


def add_config_flags(p: argparse.ArgumentParser, *, name_required: bool = False) -> None:
    """The ClusterConfiguration flags (the most used parameters; ``--set`` reaches the rest)."""
    p.add_argument("name", nargs=None if name_required else "?", help="the cluster's name")
    p.add_argument("-f", "--filename", help="YAML/JSON file of ClusterConfiguration parameters")
    p.add_argument("--image", help="Ray image (default: rayproject/ray:<ray version>)")
    p.add_argument("--ray-version", help="the Ray version in the image (KubeRay's rayVersion)")
    p.add_argument("--num-workers", type=int, help="workers in the main group")
    p.add_argument("--min-workers", type=int, help="autoscaling lower bound")
    p.add_argument("--max-workers", type=int, help="autoscaling upper bound")
    p.add_argument("--worker-cpu", help="CPU of each worker, requests = limits (e.g. 2, 500m)")
    p.add_argument("--worker-memory", help="memory of each worker, requests = limits (e.g. 8Gi)")
    p.add_argument("--worker-gpus", type=int, help=f"{GPU} per worker")
    p.add_argument("--head-cpu", help="CPU of the head, requests = limits")
    p.add_argument("--head-memory", help="memory of the head, requests = limits")
    p.add_argument("--head-gpus", type=int, help=f"{GPU} on the head")
    p.add_argument("--local-queue", help="Kueue LocalQueue (default: the namespace's default)")
    p.add_argument("--priority-class", help="Kueue WorkloadPriorityClass")
    p.add_argument(
        "--appwrapper",
        action="store_const",
        const=True,
        help="wrap the RayCluster in an AppWrapper",
    )
    p.add_argument(
        "--autoscaling", action="store_const", const=True, help="enable the Ray autoscaler"
    )
    p.add_argument("--env", action="append", metavar="KEY=VALUE", help="environment variable")
    p.add_argument("--label", action="append", metavar="KEY=VALUE", help="label on the cluster")
    p.add_argument(
        "--set",
        action="append",
        metavar="NAME=VALUE",
        help="any ClusterConfiguration parameter (value read as YAML), e.g. enable_gcs_ft=true",
    )


def _flag_params(args: argparse.Namespace) -> dict[str, object]:
    both = {
        "worker_cpu": args.worker_cpu,
        "worker_memory": args.worker_memory,
        "head_cpu": args.head_cpu,
        "head_memory": args.head_memory,
    }
    out: dict[str, object] = {
        "name": args.name,
        "image": args.image,
        "ray_version": args.ray_version,
        "num_workers": args.num_workers,
        "min_workers": args.min_workers,
        "max_workers": args.max_workers,
        "local_queue": args.local_queue,
        "priority_class": args.priority_class,
        "appwrapper": args.appwrapper,
        "enable_autoscaling": args.autoscaling,
    }
    for flag, value in both.items():
        if value is not None:
            out[f"{flag}_requests"] = out[f"{flag}_limits"] = value
    for part, gpus in (("worker", args.worker_gpus), ("head", args.head_gpus)):
        if gpus is not None:
            out[f"{part}_extended_resource_requests"] = {GPU: gpus}
    return out


def cluster_config(
    params: Mapping[str, object], namespace: str | None = None, *, where: str = ""
) -> flarekit.ClusterConfiguration:
    """A validated ClusterConfiguration from parameter names and values (``worker_groups``
    as a list of mappings); `where` prefixes field names in errors (``cluster_config.``)."""
    params = dict(params)
    check_names(params, _init_fields(flarekit.ClusterConfiguration), "ClusterConfiguration", where)
    if namespace is not None:
        params["namespace"] = namespace
    groups = params.get("worker_groups") or []
    if not isinstance(groups, list):
        raise ConfigError(
            [Problem(f"{where}worker_groups", groups, "expected a list", "a list of mappings")]
        )
    built = []
    for i, group in enumerate(groups):
        path = f"{where}worker_groups[{i}]."
        if not isinstance(group, Mapping):
            raise ConfigError(
                [Problem(path[:-1], group, "expected a mapping", "a mapping of parameters")]
            )
        check_names(group, _init_fields(flarekit.WorkerGroup), "WorkerGroup", path)
        if "name" not in group:
            raise ConfigError([Problem(path + "name", None, "missing", "a group name")])
        # The constructors check the values (read from YAML, so of any type) and name each
        # wrong one: called through a Callable[..., T] they take them as they are.
        group_of: Callable[..., flarekit.WorkerGroup] = flarekit.WorkerGroup
        built.append(group_of(**{str(k): v for k, v in group.items()}))
    if groups:
        params["worker_groups"] = built
    if not params.get("name"):
        raise UsageError("the cluster needs a name: give it as an argument or as name: in -f")
    config_of: Callable[..., flarekit.ClusterConfiguration] = flarekit.ClusterConfiguration
    return config_of(**params)


def config_from_args(args: argparse.Namespace) -> ClusterConfiguration:
    """File, then flags, then ``--set``; ``--namespace`` wins over the file's namespace."""
    from_file = load_file(args.filename)
    flags = _flag_params(args)
    merged = merge(from_file, flags, parse_set(args.set))
    for key, flag, values in (("envs", "--env", args.env), ("labels", "--label", args.label)):
        if values:
            base = merged.get(key) or {}
            if not isinstance(base, Mapping):
                raise ConfigError([Problem(key, base, "expected a mapping", "KEY: VALUE pairs")])
            merged[key] = {**base, **key_values(values, flag)}
    return cluster_config(merged, args.namespace)


# -- commands -----------------------------------------------------------------------------------
