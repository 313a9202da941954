"""``flarekit cluster apply|diff|down|status|list|render|port-forward``: Ray clusters from the
command line.

``get`` is ``status`` and ``delete`` is ``down``, under the names kubectl users reach for.

Parameters are :class:`~flarekit.ClusterConfiguration`'s, from a file (``-f cluster.yaml``:
``name: demo``, ``num_workers: 2``, ``worker_memory_requests: 8Gi``, ``worker_groups: [...]``)
and flags (``--num-workers 3``, ``--worker-memory 8Gi``, ``--set enable_gcs_ft=true``), flags
winning. ``render`` needs no cluster and no credentials: it writes the RayCluster (or the
AppWrapper holding it) as YAML or JSON. ``port-forward NAME [LOCAL:]REMOTE`` relays a port
on 127.0.0.1 to a port of the cluster's head pod through the API server, until interrupted
(``port-forward demo 10001`` for ``ray.init("ray://127.0.0.1:10001")``).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import flarekit
import flarekit.cluster
from flarekit._json import JsonValue
from flarekit._objects import metadata_of
from flarekit._tables import Age
from flarekit._yaml import dump_yaml
from flarekit.cli._cluster_config import add_config_flags, cluster_config, config_from_args
from flarekit.cli._common import (
    add_common,
    connect,
    namespace_of,
    plain_text,
    seconds,
    target_flags,
)
from flarekit.cli._exit import UsageError, leaving
from flarekit.cli._listing import Listed, Listing, add_listing_flags, show, watch
from flarekit.cli._output import DELETE_FORMATS, LIST_FORMATS, emit, emit_objects, object_name
from flarekit.cli._plan import add_diff, add_dry_run, dry_run_apply
from flarekit_models.ray import v1 as ray_v1

if TYPE_CHECKING:

    from flarekit import Client

__all__ = ["cluster_config", "register"]


def _apply(args: argparse.Namespace) -> int:
    if args.dry_run != "none":
        return dry_run_apply(args)
    config = config_from_args(args)  # validated before connecting
    client = connect(args)
    cluster = flarekit.Cluster(config, client).apply(force=args.force, no_queue=args.no_queue)
    if args.wait:
        left = (
            f"Ray cluster {cluster.namespace}/{cluster.name} is left on the cluster: remove it "
            f"with `flarekit cluster down {cluster.name} {target_flags(args, cluster.namespace)}`"
        )
        with leaving(left):
            status = cluster.wait_ready(timeout=args.timeout)
    else:
        status = cluster.status()
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
    header = (*shape.header(), "AGE")

    def read() -> list[Listed]:
        rows = []
        for found in flarekit.cluster.find_clusters(
            client, namespace, label_selector=args.selector
        ):
            s = found.status
            if args.queued and s.state is not flarekit.ClusterState.QUEUED:
                continue
            meta = metadata_of(found.resource)
            created = Age(meta.creation_timestamp if meta is not None else None)
            row = (*flarekit.cluster.ClusterList([s], namespace=namespace).rows()[0], created)
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


def _ports(text: str) -> tuple[int, int]:
    """``[LOCAL:]REMOTE`` as (local, remote); LOCAL 0 or empty: any free port."""
    local, _, remote = text.rpartition(":")
    try:
        numbers = (int(local) if local else (0 if ":" in text else int(remote)), int(remote))
    except ValueError:
        numbers = (-1, -1)
    if not (0 <= numbers[0] <= 65535 and 1 <= numbers[1] <= 65535):
        raise UsageError(
            f"PORTS must be [LOCAL:]REMOTE with REMOTE 1 to 65535 and LOCAL 0 (any free port) "
            f"to 65535, got {text!r}"
        )
    return numbers


def _port_forward(args: argparse.Namespace) -> int:
    import contextlib
    import threading

    local, remote = _ports(args.ports)  # checked before connecting
    client = connect(args)
    cluster = flarekit.get_cluster(args.name, namespace_of(args, client), client)
    with cluster.port_forward(remote, local_port=local) as forward:
        args.err.write(
            f"Forwarding from 127.0.0.1:{forward.local_port} -> {remote} of pod "
            f"{forward.namespace}/{forward.pod} (through the API server); Ctrl-C ends it\n"
        )
        args.err.flush()
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    return 0


def _yaml(data: Mapping[str, JsonValue]) -> str:
    return dump_yaml(dict(data), sort_keys=False)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``cluster`` and its subcommands."""
    group = commands.add_parser("cluster", help="Ray clusters", description=plain_text(__doc__))
    sub = group.add_subparsers(dest="action", required=True, metavar="ACTION")

    apply = sub.add_parser("apply", help="create or update a Ray cluster")
    add_config_flags(apply)
    apply.add_argument(
        "--wait",
        action="store_true",
        help="wait until it is ready (Ctrl-C or the timeout leave it, and say how to remove it)",
    )
    apply.add_argument("--timeout", type=seconds, default=600.0, help="seconds to wait (600)")
    apply.add_argument("--force", action="store_true", help="take over fields others manage")
    add_dry_run(apply)
    apply.add_argument(
        "--no-queue",
        action="store_true",
        help="without a Kueue queue, on purpose (e.g. a namespace that has no LocalQueue)",
    )
    add_common(apply)
    apply.set_defaults(run=_apply)
    add_diff(sub)

    down = sub.add_parser("down", aliases=["delete"], help="delete a Ray cluster")
    down.add_argument("name", help="the cluster's name")
    down.add_argument("--wait", action="store_true", help="wait until it is gone")
    down.add_argument("--timeout", type=seconds, default=300.0, help="seconds to wait (300)")
    down.add_argument(
        "--ignore-not-found", action="store_true", help="succeed when there is no such cluster"
    )
    add_common(down, formats=DELETE_FORMATS)
    down.set_defaults(run=_down)

    status = sub.add_parser("status", aliases=["get"], help="a Ray cluster's state")
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

    forward = sub.add_parser(
        "port-forward",
        help="relay a local port to the head pod, through the API server",
        description="Relay 127.0.0.1:LOCAL to port REMOTE of the Ray cluster's running head "
        "pod through the API server (pods/portforward), as `kubectl port-forward` does, until "
        "interrupted. LOCAL defaults to REMOTE; 0 picks a free port.",
    )
    forward.add_argument("name", help="the cluster's name")
    forward.add_argument("ports", metavar="[LOCAL:]REMOTE", help="e.g. 10001, 8265:8265, 0:10001")
    add_common(forward, formats=("table",), default="table")
    forward.set_defaults(run=_port_forward)
