"""Exit codes of the ``flarekit`` command, and the one line each failure is reported in.

Why: scripts and CI branch on *why* a command failed (fix the command line, fix the
parameters, fix the connection, or look at the cluster), and people want one readable line,
not a traceback. :func:`classify` maps every exception the facade raises to its code.
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterator

import flarekit.client
import flarekit.job
import flarekit.ray
from flarekit._validation import ConfigError
from flarekit._wait import WaitError

__all__ = ["ExitCode", "UsageError", "classify", "one_line"]
__all__ = ["ExitCode", "LeftOnCluster", "UsageError", "classify", "leaving", "one_line"]


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
    #: A wait (``--wait``) ended in a failure of the cluster or job, or timed out (the error
    #: line then names what is left on the cluster and the command that removes it).
    WAIT_FAILED = 5
    #: ``cluster diff`` only: the API refused the request or could not be reached (there,
    #: as with ``kubectl diff``, 1 means that something would change).
    DIFF_FAILED = 6
    #: A bug: an exception flarekit does not expect (``--debug`` shows the traceback).
    INTERNAL_ERROR = 70
    #: Interrupted (Ctrl-C); an interrupted wait names what it leaves on the cluster.
    INTERRUPTED = 130


class UsageError(Exception):
    """The command line or a config file is wrong; the message says what to write instead."""


class LeftOnCluster(Exception):
    """A wait ended early (Ctrl-C, or its timeout) while what it waited for stays on the
    cluster. Why: the user stopped watching, not the work; the one error line says what is
    still there (it may be holding quota or running) and which command removes it."""

    def __init__(self, cause: BaseException, left: str) -> None:
        if isinstance(cause, KeyboardInterrupt):
            why = "interrupted"
        elif isinstance(
            cause, flarekit.ray.RayJobTimeout
        ):  # its own message speaks Python (stop(...))
            why = f"timed out after {cause.timeout:g}s (last status: {cause.last_status})"
        else:
            why = one_line(cause)
        super().__init__(f"{why}; {left}")
        self.cause = cause


@contextlib.contextmanager
def leaving(left: str) -> Iterator[None]:
    """Run a wait; if Ctrl-C or its timeout ends it, raise :class:`LeftOnCluster` saying
    `left` ("Ray cluster ns/demo is left on the cluster: remove it with `...`")."""
    try:
        yield
    except (KeyboardInterrupt, TimeoutError) as exc:
        raise LeftOnCluster(exc, left) from exc


def one_line(exc: BaseException) -> str:
    """The exception's message on a single line (multi-line messages, such as a list of
    validation problems, are joined with ``; ``), with its notes (what it means, what to do)."""
    text = "\n".join([str(exc), *getattr(exc, "__notes__", ())])
    lines = [line.strip() for line in text.splitlines()]
    lines = [line.removeprefix("- ").strip() for line in lines if line]
    if not lines:
        return type(exc).__name__
    head, rest = lines[0], lines[1:]
    if not rest:
        return head
    return head.rstrip(":") + ": " + "; ".join(rest)


def classify(exc: BaseException) -> ExitCode:
    """The exit code for an exception raised while running a command."""

    if isinstance(exc, LeftOnCluster):
        return classify(exc.cause)
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
