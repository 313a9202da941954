"""The ``flarekit`` command: its parser, and how every command ends.

Each command group registers its own subcommands (``_cluster``, ``_job``, ``_ray``,
``_queue``, ``_dev``, ``_version``, ``_completion``); this module parses, runs the chosen
command, and turns any failure into one ``error: ...`` line on stderr and an exit code from
:class:`~flarekit.cli._exit.ExitCode` (``--debug`` adds the traceback).
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence
from typing import TextIO

from flarekit.cli import _cluster, _completion, _dev, _job, _queue, _ray, _version
from flarekit.cli._exit import ExitCode, UsageError, classify, one_line

__all__ = ["build_parser", "main"]


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so usage errors end like every other error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="flarekit",
        description="Ray clusters, Ray jobs, training jobs and Kueue queues on Kubernetes.",
        epilog="Exit codes: 0 ok, 1 API error, 2 usage error, 3 invalid parameters (nothing "
        "sent), 4 no cluster configured, 5 a waited-for cluster or job failed or timed out, "
        "70 internal error, 130 interrupted (Ctrl-C). A wait that times out or is interrupted "
        "ends with one line naming what it leaves on the cluster and the command that removes "
        "it.",
    )
    parser.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks"
    )
    parser.add_argument(
        "--version",
        action=_version.VersionAction,
        help="show flarekit's version, and the generator and pinned releases of its models",
    )
    commands = parser.add_subparsers(
        dest="group", required=True, metavar="COMMAND", parser_class=_Parser
    )
    for group in (_cluster, _job, _ray, _queue, _dev, _version, _completion):
        group.register(commands)
    return parser


def _split_command(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """Everything after the first ``--`` is a command to run (``job submit ... -- cmd``)."""
    if "--" not in argv:
        return argv, None
    at = argv.index("--")
    return argv[:at], argv[at + 1 :]


def main(
    argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run ``flarekit`` with `argv` (default: the process arguments); returns the exit code."""
    if argv is None:  # the shell asking for TAB completions (see _completion)
        _completion.complete_if_asked(build_parser)
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    raw = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in raw
    if not raw:  # usage, as kubectl and git print it, rather than an error
        out.write(build_parser().format_help())
        out.flush()
        return int(ExitCode.OK)
    try:
        head, command = _split_command(raw)
        args = build_parser().parse_args(head)
        if command is not None and not getattr(args, "takes_command", False):
            raise UsageError(f"unexpected arguments after --: {' '.join(command)}")
        args.command = command or []
        args.out, args.err = out, err
        return int(args.run(args))
    except SystemExit as exc:  # --help and --version-like exits from argparse
        return int(exc.code or 0) if isinstance(exc.code, int) else 0
    except BaseException as exc:
        code = classify(exc)
        if debug:
            traceback.print_exception(exc, file=err)
        message = one_line(exc)
        if code is ExitCode.INTERNAL_ERROR:
            message = f"unexpected {type(exc).__name__}: {message} (run with --debug for details)"
        if code is ExitCode.INTERRUPTED and err.isatty():
            err.write("\n")  # below the ^C the terminal echoed, not after it
        err.write(f"error: {message}\n")
        err.flush()
        return int(code)
