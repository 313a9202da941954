"""``flarekit cluster apply|down|status|list|render``: Ray clusters from the command line.

Parameters are :class:`~flarekit.ClusterConfiguration`'s, from a file (``-f cluster.yaml``:
``name: demo``, ``num_workers: 2``, ``worker_memory_requests: 8Gi``, ``worker_groups: [...]``)
and flags (``--num-workers 3``, ``--worker-memory 8Gi``, ``--set enable_gcs_ft=true``), flags
winning. ``render`` needs no cluster and no credentials: it writes the RayCluster (or the
AppWrapper holding it) as YAML or JSON.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import flarekit
import flarekit.cluster
from flarekit._json import JsonValue
from flarekit._validation import ConfigError, Problem
from flarekit._yaml import dump_yaml
from flarekit.cli._common import add_common, connect, namespace_of, plain_text, seconds
from flarekit.cli._exit import UsageError
from flarekit.cli._listing import Listed, Listing, add_listing_flags, show, watch
from flarekit.cli._output import DELETE_FORMATS, LIST_FORMATS, emit, emit_objects, object_name
from flarekit.cli._params import check_names, key_values, load_file, merge, parse_set
from flarekit_models.ray import v1 as ray_v1

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from flarekit import Client, ClusterConfiguration

__all__ = ["cluster_config", "register"]

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


def _apply(args: argparse.Namespace) -> int:
    config = config_from_args(args)  # validated before connecting
    client = connect(args)
    cluster = flarekit.Cluster(config, client).apply(force=args.force)
    status = cluster.wait_ready(timeout=args.timeout) if args.wait else cluster.status()
    emit_objects([cluster.resource()], args.output, args.out, table=str(status), single=True)
    return 0


def _down(args: argparse.Namespace) -> int:
    client = connect(args)
    namespace = namespace_of(args, client)
    try:
        cluster = flarekit.get_cluster(args.name, namespace, client)
        resource = cluster.resource()
        deleted = cluster.down(wait=args.wait, timeout=args.timeout)
    except flarekit.NotFound:
        if not args.ignore_not_found:
            raise
        deleted = False
    if args.output == "name":
        args.out.write(f"{object_name(resource)}\n" if deleted else "")
        return 0
    table = f"Ray cluster {namespace}/{args.name} " + (
        "deleted" if deleted else "not found: nothing to delete"
    )
    emit(None, "table", args.out, table=table)
    return 0


def _status(args: argparse.Namespace) -> int:
    if args.details and args.output != "table":
        raise UsageError(
            f"--details is a table; -o {args.output} prints the stored object: leave out one"
        )
    client = connect(args)
    cluster = flarekit.get_cluster(args.name, namespace_of(args, client), client)
    if args.output != "table":
        emit_objects([cluster.resource()], args.output, args.out, table="", single=True)
        return 0
    emit(cluster.details() if args.details else cluster.status(), "table", args.out)
    return 0


_WIDE = ("KIND", "HEAD")


def _listing(client: Client, namespace: str, args: argparse.Namespace) -> Listing:
    every = namespace == flarekit.ALL_NAMESPACES
    shape = flarekit.cluster.ClusterList(namespace=namespace)
    header = shape.header()

    def read() -> list[Listed]:
        rows = []
        for found in flarekit.cluster.find_clusters(
            client, namespace, label_selector=args.selector
        ):
            s = found.status
            if args.queued and s.state is not flarekit.ClusterState.QUEUED:
                continue
            row = flarekit.cluster.ClusterList([s], namespace=namespace).rows()[0]
            kind = type(found.resource).resource_info().kind
            wide = (*row, kind, s.head_address)
            rows.append(Listed((s.namespace, s.name, kind), row, wide, found.resource))
        return rows

    def title(count: int) -> str:
        where = "in all namespaces" if every else f"in namespace {namespace}"
        what = "Queued Ray clusters" if args.queued else "Ray clusters"
        selected = f" with labels {args.selector}" if args.selector else ""
        return f"{what} {where}{selected}: {count}"

    kinds = (ray_v1.RayCluster, flarekit.cluster.appwrapper_kind(client))
    return Listing(header, (*header, *_WIDE), title, read, kinds)


def _list(args: argparse.Namespace) -> int:
    client = connect(args)
    namespace = flarekit.ALL_NAMESPACES if args.all_namespaces else namespace_of(args, client)
    listing = _listing(client, namespace, args)
    if args.watch:
        watch(listing, client, namespace, args.output, args.out, timeout=args.timeout)
    else:
        show(listing, args.output, args.out)
    return 0


def _render(args: argparse.Namespace) -> int:
    config = config_from_args(args)  # validated as it is built: not checked a second time
    data = flarekit.cluster.render(config, validated=True).to_dict()
    text = json.dumps(data, indent=2) + "\n" if args.output == "json" else _yaml(data)
    if args.out_dir is None:
        args.out.write(text)
        return 0
    directory = Path(args.out_dir)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{str(data['kind']).lower()}-{config.name}.{args.output}"
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write to {directory}: {exc.strerror or exc}") from None
    args.err.write(f"wrote {path}\n")
    return 0


def _yaml(data: Mapping[str, JsonValue]) -> str:
    return dump_yaml(dict(data), sort_keys=False)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``cluster`` and its subcommands."""
    group = commands.add_parser("cluster", help="Ray clusters", description=plain_text(__doc__))
    sub = group.add_subparsers(dest="action", required=True, metavar="ACTION")

    apply = sub.add_parser("apply", help="create or update a Ray cluster")
    add_config_flags(apply)
    apply.add_argument("--wait", action="store_true", help="wait until it is ready")
    apply.add_argument("--timeout", type=seconds, default=600.0, help="seconds to wait (600)")
    apply.add_argument("--force", action="store_true", help="take over fields others manage")
    add_common(apply)
    apply.set_defaults(run=_apply)

    down = sub.add_parser("down", help="delete a Ray cluster")
    down.add_argument("name", help="the cluster's name")
    down.add_argument("--wait", action="store_true", help="wait until it is gone")
    down.add_argument("--timeout", type=seconds, default=300.0, help="seconds to wait (300)")
    down.add_argument(
        "--ignore-not-found", action="store_true", help="succeed when there is no such cluster"
    )
    add_common(down, formats=DELETE_FORMATS)
    down.set_defaults(run=_down)

    status = sub.add_parser("status", help="a Ray cluster's state")
    status.add_argument("name", help="the cluster's name")
    status.add_argument(
        "--details", action="store_true", help="also addresses, queue admission, resources"
    )
    add_common(status)
    status.set_defaults(run=_status)

    listing = sub.add_parser("list", help="the Ray clusters in a namespace")
    listing.add_argument(
        "--queued", action="store_true", help="only those waiting for Kueue to admit them"
    )
    add_listing_flags(listing, "clusters")
    add_common(listing, formats=LIST_FORMATS)
    listing.set_defaults(run=_list)

    render = sub.add_parser(
        "render",
        help="write the cluster's YAML without a cluster or credentials",
        description="Render the RayCluster (or the AppWrapper holding it) offline: to stdout, "
        "or with --out-dir DIR to DIR/<kind>-<name>.yaml (.json with -o json).",
    )
    add_config_flags(render)
    render.add_argument("-d", "--out-dir", help="directory to write the file to")
    add_common(
        render,
        formats=("yaml", "json"),
        default="yaml",
        hint=" (to write the file into a directory, use --out-dir DIR)",
    )
    render.set_defaults(run=_render)
