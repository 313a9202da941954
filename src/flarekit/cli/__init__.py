"""The ``flarekit`` command: Ray clusters, jobs and Kueue queues from a terminal.

::

    flarekit cluster apply|down|status|list|render
    flarekit job submit|status|logs|stop|delete|list    (--kind rayjob|trainjob)
    flarekit ray job submit|status|logs|list|stop|delete   (Ray's own jobs, on a dashboard)
    flarekit queue list|status
    flarekit dev up|down|status
    flarekit completion bash|zsh|fish
    flarekit version
    flarekit --version

Every command takes ``-n/--namespace``, ``--context``, ``--kubeconfig``, ``-o/--output`` and
``--debug``, as kubectl does: ``-o yaml|json`` print the API objects as stored, ``-o name``
their ``kind.group/name``, ``-o wide`` more columns; ``list`` commands take ``-A``, ``-l`` and
``-w``. Cluster and job parameters come from a YAML/JSON file (``-f``, the Python API's
parameter names) and flags. ``flarekit cluster render -f cluster.yaml --out-dir out/``
writes manifests with no cluster and no credentials.

Errors print one line (``error: ...``) on stderr and exit with a code that says what kind of
failure it was (see :class:`ExitCode`: 1 API error, 2 usage error, 3 invalid parameters with
nothing sent, 4 no cluster configured, 5 a waited-for cluster or job failed or timed out, 70
internal error, 130 interrupted); ``--debug`` adds the traceback.

Built on the standard library's ``argparse`` rather than click, typer or rich: each of those
would add distributions to ``pip install flarekit``, which is held to at most 20 in total.
"""

from flarekit.cli._app import build_parser, main
from flarekit.cli._exit import ExitCode, UsageError

__all__ = ["ExitCode", "UsageError", "build_parser", "main"]
