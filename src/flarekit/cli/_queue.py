"""``flarekit queue list|status``: Kueue LocalQueues, how busy they are and how much is left.

Read-only on purpose: users ask which queue to use and whether it is full; creating queues
is the platform admin's job (:func:`flarekit.apply_all` and the ``*Spec`` classes).
"""

from __future__ import annotations

import argparse

from flarekit.cli._common import add_common, connect, namespace_of
from flarekit.cli._output import emit

__all__ = ["register"]


def _list(args: argparse.Namespace) -> int:
    from flarekit import ALL_NAMESPACES, list_queues

    client = connect(args)
    namespace = ALL_NAMESPACES if args.all_namespaces else namespace_of(args, client)
    emit(list_queues(client, namespace), args.output, args.out)
    return 0


def _status(args: argparse.Namespace) -> int:
    from flarekit import queue_status

    client = connect(args)
    emit(queue_status(client, args.name, namespace_of(args, client)), args.output, args.out)
    return 0


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``queue`` and its subcommands."""
    group = commands.add_parser("queue", help="Kueue LocalQueues", description=__doc__)
    sub = group.add_subparsers(dest="action", required=True, metavar="ACTION")

    listing = sub.add_parser("list", help="the LocalQueues of a namespace, with usage and quota")
    listing.add_argument("-A", "--all-namespaces", action="store_true", help="in every namespace")
    add_common(listing)
    listing.set_defaults(run=_list)

    status = sub.add_parser("status", help="one LocalQueue and its ClusterQueue's quota")
    status.add_argument("name", help="the LocalQueue's name")
    add_common(status)
    status.set_defaults(run=_status)
