"""What every ``flarekit`` command accepts, and how it connects to the cluster.

Every command takes ``--namespace``, ``--context``, ``--kubeconfig``, ``-o/--output`` and
``--debug``, after the command (``flarekit cluster list -n team-a``). They are added to each
command's own parser, so ``--help`` shows them where they apply, with the output formats that
command has. Connecting happens only when a command needs the cluster: ``render`` never reads
a kubeconfig.
"""

from __future__ import annotations

import argparse
import re
import shlex
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import flarekit
from flarekit.cli._output import GET_FORMATS, Format

if TYPE_CHECKING:
    from flarekit import Client

__all__ = ["add_common", "connect", "namespace_of", "plain_text", "seconds", "target_flags"]

_ROLE = re.compile(r":[a-z]+:`~?(?:[\w.]+\.)?([^`]+)`")


def plain_text(doc: str | None) -> str:
    """A module docstring as ``--help`` shows it: reStructuredText roles and literals become
    plain words (``:class:`~flarekit.Cluster``` -> ``Cluster``, double backquotes dropped)."""
    text = _ROLE.sub(r"\1", doc or "")
    text = text.replace("``", "").replace("`", "")
    return text.replace("::\n", ":\n")


def seconds(text: str) -> float:
    """A ``--timeout`` value: a number of seconds, 0 or more (checked while parsing, so a bad
    one is a usage error before anything is sent)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"{text}: a timeout is 0 seconds or more")
    return value


def _format_type(formats: Sequence[Format], hint: str) -> Callable[[str], Format]:
    """The ``--output`` value checker: the formats this command has, and a hint for what the
    user may have meant instead (``render -o out/`` meant ``--out-dir out/``)."""

    def check(text: str) -> Format:
        for fmt in formats:
            if text == fmt:
                return fmt
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an output format of this command: use one of "
            f"{', '.join(formats)}{hint}"
        )

    check.__name__ = "output format"
    return check


def add_common(
    parser: argparse.ArgumentParser,
    *,
    formats: Sequence[Format] = GET_FORMATS,
    default: Format = "table",
    hint: str = "",
) -> None:
    """Add the shared options to a command's parser; ``-o/--output`` offers `formats`."""
    group = parser.add_argument_group("common options")
    group.add_argument("-n", "--namespace", help="namespace (default: the context's namespace)")
    group.add_argument("--context", help="kubeconfig context (default: the current context)")
    group.add_argument(
        "--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)"
    )
    group.add_argument(
        "-o",
        "--output",
        type=_format_type(formats, hint),
        default=default,
        metavar="|".join(formats),
        help=f"output format (default: {default})",
    )
    group.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show the traceback of errors",
    )


def connect(args: argparse.Namespace) -> flarekit.Client:
    """A client for the cluster the options name: ``--kubeconfig`` / ``--context`` if given,
    else the usual places (a login, $KUBECONFIG or ~/.kube/config, the in-cluster account)."""
    if args.kubeconfig or args.context:
        return flarekit.Client(
            flarekit.from_kubeconfig(args.kubeconfig, args.context), namespace=args.namespace
        )
    return flarekit.Client(namespace=args.namespace)


def namespace_of(args: argparse.Namespace, client: Client) -> str:
    """``--namespace``, else the client's (the context's) namespace."""
    return str(args.namespace or client.namespace or "default")


def target_flags(args: argparse.Namespace, namespace: str) -> str:
    """The options that reach the same namespace again (``-n team-a``, plus ``--context`` and
    ``--kubeconfig`` when they were given), for a command the user is told to run."""
    words = ["-n", namespace]
    for flag, value in (("--context", args.context), ("--kubeconfig", args.kubeconfig)):
        if value:
            words += [flag, value]
    return shlex.join(words)
