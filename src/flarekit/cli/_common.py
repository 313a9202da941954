"""What every ``flarekit`` command accepts, and how it connects to the cluster.

Every command takes ``--namespace``, ``--context``, ``--kubeconfig``, ``--output`` and
``--debug``, after the command (``flarekit cluster list -n team-a``). They are added to each
command's own parser, so ``--help`` shows them where they apply. Connecting happens only
when a command needs the cluster: ``render`` never reads a kubeconfig.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from flarekit.cli._output import FORMATS

if TYPE_CHECKING:
    from flarekit import Client

__all__ = ["add_common", "connect", "namespace_of"]


def add_common(parser: argparse.ArgumentParser, *, short_output: bool = True) -> None:
    """Add the shared options to a command's parser (``-o`` is ``--output`` unless the command
    uses ``-o`` for something else, as ``render`` does for its output directory)."""
    group = parser.add_argument_group("common options")
    group.add_argument("-n", "--namespace", help="namespace (default: the context's namespace)")
    group.add_argument("--context", help="kubeconfig context (default: the current context)")
    group.add_argument(
        "--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)"
    )
    flags = ("-o", "--output") if short_output else ("--output",)
    group.add_argument(
        *flags,
        dest="output",
        choices=FORMATS,
        default="table",
        help="output format (default: table)",
    )
    group.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show the traceback of errors",
    )


def connect(args: argparse.Namespace) -> Client:
    """A client for the cluster the options name: ``--kubeconfig`` / ``--context`` if given,
    else the usual places (a login, $KUBECONFIG or ~/.kube/config, the in-cluster account)."""
    from flarekit import Client, from_kubeconfig

    if args.kubeconfig or args.context:
        return Client(from_kubeconfig(args.kubeconfig, args.context), namespace=args.namespace)
    return Client(namespace=args.namespace)


def namespace_of(args: argparse.Namespace, client: Client) -> str:
    """``--namespace``, else the client's (the context's) namespace."""
    return str(args.namespace or client.namespace or "default")
