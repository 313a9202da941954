"""``flarekit queue list|status``: Kueue LocalQueues, how busy they are and how much is left.

Read-only on purpose: users ask which queue to use and whether it is full; creating queues
is the platform admin's job (:func:`flarekit.apply_all` and the ``*Spec`` classes).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

import flarekit
import flarekit.kueue
from flarekit.cli._common import add_common, connect, namespace_of, plain_text
from flarekit.cli._output import GET_FORMATS, emit, emit_objects

if TYPE_CHECKING:
    from flarekit import Client
    from flarekit_models import KubeResource

__all__ = ["register"]


def _local_queue_kind(client: Client) -> type[KubeResource]:
    kind: type[KubeResource] = flarekit.kueue.kueue_model(client, "LocalQueue")
    return kind


def _list(args: argparse.Namespace) -> int:
    client = connect(args)
    namespace = flarekit.ALL_NAMESPACES if args.all_namespaces else namespace_of(args, client)
    if args.output == "table":
        emit(flarekit.list_queues(client, namespace), "table", args.out)
        return 0
    queues = client.list(_local_queue_kind(client), namespace=namespace)
    emit_objects(list(queues), args.output, args.out, table="")
    return 0


def _status(args: argparse.Namespace) -> int:
    client = connect(args)
    namespace = namespace_of(args, client)
    status = flarekit.queue_status(client, args.name, namespace)
    if args.output == "table":
        emit(status, "table", args.out)
        return 0
    queue = client.get(_local_queue_kind(client), args.name, namespace=namespace)
    emit_objects([queue], args.output, args.out, table="", single=True)
    return 0


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``queue`` and its subcommands."""
    group = commands.add_parser("queue", help="Kueue LocalQueues", description=plain_text(__doc__))
    sub = group.add_subparsers(dest="action", required=True, metavar="ACTION")

    listing = sub.add_parser("list", help="the LocalQueues of a namespace, with usage and quota")
    listing.add_argument("-A", "--all-namespaces", action="store_true", help="in every namespace")
    add_common(listing, formats=GET_FORMATS)
    listing.set_defaults(run=_list)

    status = sub.add_parser("status", help="one LocalQueue and its ClusterQueue's quota")
    status.add_argument("name", help="the LocalQueue's name")
    add_common(status)
    status.set_defaults(run=_status)
