"""``flarekit cluster diff`` and ``flarekit cluster apply --dry-run=server``: plan before apply.

Why: a change to a running cluster is reviewed before it is made. Both commands send the
apply as a server-side dry run (defaults and admission webhooks included; nothing is
written; see `flarekit._plan`). ``diff`` prints the change to the fields the user owns as a
unified diff and exits as ``kubectl diff`` does: 0 when nothing would change, 1 when
something would, more than 1 on an error (an API error, 1 for other commands, is
`ExitCode.DIFF_FAILED` here).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

import flarekit
from flarekit.cli._cluster_config import add_config_flags, config_from_args
from flarekit.cli._common import add_common, connect, plain_text
from flarekit.cli._exit import ExitCode, UsageError, classify, one_line
from flarekit.cli._output import dump

if TYPE_CHECKING:
    from flarekit._plan import Plan

__all__ = ["add_diff", "add_dry_run", "dry_run_apply"]

#: ``--dry-run`` values, as kubectl names them; the client-side one is ``cluster render``.
DRY_RUN_VALUES = ("none", "server", "client")


def add_dry_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dry-run",
        choices=DRY_RUN_VALUES,
        default="none",
        help="server: send the apply as a server-side dry run and print what it would do "
        "(nothing is written); client: use `flarekit cluster render`",
    )


def _plan(args: argparse.Namespace) -> Plan:
    config = config_from_args(args)  # validated before connecting
    no_queue = bool(getattr(args, "no_queue", False))  # apply's flag; diff has none
    return flarekit.Cluster(config, connect(args)).apply(
        force=args.force, no_queue=no_queue, dry_run=True
    )


def dry_run_apply(args: argparse.Namespace) -> int:
    """``cluster apply --dry-run=server``: kubectl's lines, or the objects as the server would
    store them (``-o yaml|json``)."""
    if args.dry_run == "client":
        raise UsageError("--dry-run=client: `flarekit cluster render` writes the object offline")
    if args.wait:
        raise UsageError("--wait with --dry-run: nothing is created to wait for")
    plan = _plan(args)
    if args.output in ("yaml", "json"):
        for change in plan:
            args.out.write(dump(change.result, args.output))
    elif args.output == "name":
        args.out.write("".join(f"{c.summary().split()[0]}\n" for c in plan))
    else:
        args.out.write(plan.summary())
        for change in plan:
            for path, value in change.defaults.items():
                args.out.write(f"  set by the server: {path}={value}\n")
    args.out.flush()
    return 0


def _diff(args: argparse.Namespace) -> int:
    try:
        plan = _plan(args)
    except Exception as exc:
        if classify(exc) is not ExitCode.API_ERROR:
            raise
        args.err.write(f"error: {one_line(exc)}\n")  # 1 means "changes" here
        args.err.flush()
        return int(ExitCode.DIFF_FAILED)
    args.out.write(str(plan))
    args.out.flush()
    return plan.exit_code


def add_diff(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``cluster diff`` (the same parameters as ``cluster apply``)."""
    diff = sub.add_parser(
        "diff",
        help="what `cluster apply` would change (exit 0: nothing, 1: changes)",
        description=plain_text(__doc__),
    )
    add_config_flags(diff)
    diff.add_argument("--force", action="store_true", help="as apply would take over fields")
    add_common(diff, formats=("table",))
    diff.set_defaults(run=_diff)
