"""Exit codes of the ``flarekit`` command, and the one line each failure is reported in.

Why: scripts and CI branch on *why* a command failed (fix the command line, fix the
parameters, fix the connection, or look at the cluster), and people want one readable line,
not a traceback. :func:`classify` maps every exception the facade raises to its code.
"""

from __future__ import annotations

import enum

import flarekit.client
import flarekit.job
import flarekit.ray
from flarekit._validation import ConfigError
from flarekit._wait import WaitError

__all__ = ["ExitCode", "UsageError", "classify", "one_line"]


class ExitCode(enum.IntEnum):
    """What the process exit status means."""

    OK = 0
    #: The Kubernetes API refused the request or could not be reached, or the object is not
    #: in a state that allows the command (for example: no such cluster, no pods yet).
    API_ERROR = 1
    #: The command line is wrong, or a config file (-f) cannot be read or is not YAML/JSON.
    USAGE_ERROR = 2
    #: The parameters are invalid, or name a queue or runtime that does not exist; nothing
    #: was sent (or created) on the cluster.
    VALIDATION_ERROR = 3
    #: No usable cluster configuration: no kubeconfig, an unknown context, no credentials.
    NO_CLUSTER = 4
    #: A wait (``--wait``) ended in a failure of the cluster or job, or timed out.
    WAIT_FAILED = 5
    #: A bug: an exception flarekit does not expect (``--debug`` shows the traceback).
    INTERNAL_ERROR = 70
    #: Interrupted (Ctrl-C).
    INTERRUPTED = 130


class UsageError(Exception):
    """The command line or a config file is wrong; the message says what to write instead."""


def one_line(exc: BaseException) -> str:
    """The exception's message on a single line (multi-line messages, such as a list of
    validation problems, are joined with ``; ``)."""
    lines = [line.strip() for line in str(exc).splitlines()]
    lines = [line.removeprefix("- ").strip() for line in lines if line]
    if not lines:
        return type(exc).__name__
    head, rest = lines[0], lines[1:]
    if not rest:
        return head
    return head.rstrip(":") + ": " + "; ".join(rest)


def classify(exc: BaseException) -> ExitCode:
    """The exit code for an exception raised while running a command."""
    if isinstance(exc, KeyboardInterrupt):
        return ExitCode.INTERRUPTED
    if isinstance(exc, UsageError):
        return ExitCode.USAGE_ERROR
    if isinstance(
        exc,
        ConfigError
        | flarekit.job.RuntimeNotFound
        | flarekit.job.PackagingError
        | flarekit.ray.RayJobValidationError,
    ):
        return ExitCode.VALIDATION_ERROR  # QueueNotFound is a ConfigError
    if isinstance(exc, flarekit.client.KubeconfigError):
        return ExitCode.NO_CLUSTER
    if isinstance(exc, WaitError | flarekit.ray.RayJobTimeout):
        return ExitCode.WAIT_FAILED
    if isinstance(exc, flarekit.client.ApiError | LookupError):
        return ExitCode.API_ERROR  # also NotServed, DashboardNotExposed, "no pod yet"
    if (type(exc).__module__ or "").startswith("flarekit."):
        return ExitCode.API_ERROR  # the facade's state errors, such as RayJobError
    return ExitCode.INTERNAL_ERROR
