"""``flarekit ray job submit|status|logs|list|stop|delete``: jobs on a Ray cluster's dashboard.

These are Ray's own jobs, run through the Jobs REST API of a running Ray cluster (what
``ray job submit`` talks to), not KubeRay RayJob objects (those are ``flarekit job --kind
rayjob``). The dashboard is ``--address URL``, else ``$RAY_ADDRESS`` when it is a URL, or
that of a Ray cluster on Kubernetes, ``--cluster NAME`` (with ``-n``, ``--context`` and
``--kubeconfig``), read from the Route, Ingress or HTTPRoute that exposes it. Every argument
is checked before the first request, the lookup of the cluster included::

    flarekit ray job submit --address http://127.0.0.1:8265 -- python train.py --epochs 3
    flarekit ray job logs raysubmit_XYZ --cluster demo -n team-a -f
    flarekit ray job list --address http://127.0.0.1:8265 -o wide
    flarekit ray job stop raysubmit_XYZ --address http://127.0.0.1:8265

The command after ``--`` is the entrypoint: several words are quoted for the shell as they
were given; one word is taken as a shell command line (``-- "python a.py && echo done"``).
``submit`` follows the job's output until it ends, as ``ray job submit`` does (``--no-wait``
returns at once); ``stop`` waits until Ray reports the job STOPPED. A job that ends FAILED
or STOPPED while ``submit`` waits exits 5, as does a wait that times out (the job keeps
running); a timed-out or interrupted (Ctrl-C: exit 130) ``submit`` ends with the command that
stops the job. ``-o yaml|json`` print what the dashboard reports about the jobs instead of their
output, ``-o name`` their submission ids.
"""

from __future__ import annotations

import argparse
import os
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import flarekit
import flarekit.ray
from flarekit._tables import text_table
from flarekit._wait import WaitTimeout
from flarekit.cli._common import (
    add_common,
    connect,
    namespace_of,
    plain_text,
    seconds,
    target_flags,
)
from flarekit.cli._exit import ExitCode, UsageError, leaving
from flarekit.cli._output import DELETE_FORMATS, GET_FORMATS, LIST_FORMATS, Format, dump
from flarekit.cli._params import key_values, load_file

if TYPE_CHECKING:
    from flarekit._json import JsonValue
    from flarekit.ray import JobDetails, SubmitRequest

__all__ = ["register"]

#: How often logs are polled while following a job.
_POLL = 1.0
#: How much of an entrypoint the table shows (``-o wide`` shows all of it).
_ENTRYPOINT_WIDTH = 60
#: "Until it ends" for `RayJobClient.wait`, which takes a number of seconds.
_FOREVER = 365 * 24 * 3600.0


# -- the dashboard -------------------------------------------------------------------------------


def _check_target(args: argparse.Namespace) -> Callable[[], flarekit.ray.RayJobClient]:
    """Check where the dashboard is (usage errors, a malformed URL) without any request;
    returns what opens it (for ``--cluster``, that reads the cluster first)."""
    address = args.address
    if address is None and args.cluster is None:
        env = os.getenv("RAY_ADDRESS", "")
        if env.startswith(("http://", "https://")):
            address = env
    if address is not None and args.cluster is not None:
        raise UsageError("give the dashboard as --address URL or as --cluster NAME, not both")
    if address is None and args.cluster is None:
        raise UsageError(
            "which Ray dashboard? give --address URL (e.g. http://127.0.0.1:8265), "
            "--cluster NAME for a Ray cluster on Kubernetes, or set RAY_ADDRESS to its URL"
        )
    if address is not None:
        kube = [
            flag
            for flag, value in (
                ("-n/--namespace", args.namespace),
                ("--context", args.context),
                ("--kubeconfig", args.kubeconfig),
            )
            if value is not None
        ]
        if kube:
            raise UsageError(
                f"{', '.join(kube)}: these choose a Ray cluster on Kubernetes and go with "
                "--cluster NAME, not with a dashboard --address"
            )
    headers = _headers(args.header)
    if args.insecure_skip_tls_verify and args.certificate_authority is not None:
        raise UsageError(
            "--certificate-authority and --insecure-skip-tls-verify exclude each other"
        )
    verify: bool | str = True
    if args.insecure_skip_tls_verify:
        verify = False
    elif args.certificate_authority is not None:
        verify = args.certificate_authority

    def dashboard(url: str) -> flarekit.ray.RayJobClient:
        return flarekit.ray.RayJobClient(url, headers=headers, verify=verify)

    if address is not None:
        checked = dashboard(address)  # a malformed URL is refused here, before any request
        return lambda: checked
    return lambda: dashboard(_cluster_dashboard(args))


def _cluster_dashboard(args: argparse.Namespace) -> str:
    """The dashboard URL of the Ray cluster ``--cluster`` names (``DashboardNotExposed``,
    with the port-forward to use, when nothing exposes it)."""
    client = connect(args)
    cluster = flarekit.get_cluster(args.cluster, namespace_of(args, client), client)
    return cluster.cluster_dashboard_uri()


def _target_words(args: argparse.Namespace) -> str:
    """The options that reach the same dashboard again, for a command the user is told to
    run (``--address URL``, or ``--cluster NAME -n NS`` with the kubeconfig options given)."""
    if args.cluster is None:
        address = args.address or os.environ.get("RAY_ADDRESS", "")
        return shlex.join(["--address", address])
    namespace = args.namespace or connect(args).namespace or "default"
    return shlex.join(["--cluster", args.cluster]) + " " + target_flags(args, namespace)


def _headers(items: Sequence[str] | None) -> dict[str, str]:
    """``--header 'Name: value'`` options, as curl takes them."""
    found: dict[str, str] = {}
    for item in items or ():
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise UsageError(f"--header {item!r}: expected 'Name: value'")
        found[name.strip()] = value.strip()
    return found


def _job_id(value: str) -> str:
    """A submission id as the dashboard accepts it (checked before any request)."""
    return flarekit.ray.check_submission_id(value, "SUBMISSION_ID")


# -- what is printed -----------------------------------------------------------------------------


def _id_of(job: JobDetails) -> str:
    return job.submission_id or job.job_id or ""


def _data(job: JobDetails) -> JsonValue:
    """The job as the dashboard described it, fields it added that flarekit does not know
    included."""
    data: JsonValue = job.model_dump(mode="json")
    return data


def _summary(job: JobDetails) -> str:
    text = f"Ray job {_id_of(job)}: {job.status.value}"
    if job.message:
        text += f" ({job.message.strip()})"
    return text


def _describe(job: JobDetails) -> str:
    rows: list[tuple[str, object]] = [
        ("status", job.status.value),
        ("message", job.message),
        ("entrypoint", job.entrypoint),
        ("type", job.type),
        ("job id", job.job_id),
        ("started", job.started_at),
        ("ended", job.ended_at),
        ("exit code", job.driver_exit_code),
    ]
    return text_table([r for r in rows if r[1] not in (None, "")], title=f"Ray job {_id_of(job)}")


def _show(job: JobDetails, fmt: Format, out_table: str, args: argparse.Namespace) -> None:
    """One job: `out_table` for people, the details as YAML/JSON, or its id (``-o name``)."""
    if fmt in ("yaml", "json"):
        args.out.write(dump(_data(job), fmt))
    elif fmt == "name":
        args.out.write(_id_of(job) + "\n")
    else:
        args.out.write(out_table.rstrip("\n") + "\n")
    args.out.flush()


def _failed(job: JobDetails, args: argparse.Namespace) -> int:
    """The exit code for a job a command waited for: 0 if it succeeded, else 5 with one
    ``error:`` line saying how it ended."""
    if job.status is flarekit.ray.RayJobState.SUCCEEDED:
        return int(ExitCode.OK)
    why = f": {job.message.strip()}" if job.message else ""
    args.err.write(f"error: Ray job {_id_of(job)} ended {job.status.value}{why}\n")
    args.err.flush()
    return int(ExitCode.WAIT_FAILED)


# -- commands ------------------------------------------------------------------------------------


def _entrypoint(command: Sequence[str]) -> str:
    if not command:
        raise UsageError("give the job's command after --, e.g. -- python train.py")
    return command[0] if len(command) == 1 else shlex.join(command)


def _json_option(text: str | None, flag: str) -> JsonValue:
    if text is None:
        return None
    import json

    try:
        value: JsonValue = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{flag}: not JSON ({exc})") from None
    return value


def _runtime_env(args: argparse.Namespace) -> dict[str, object] | None:
    """The runtime environment from ``--runtime-env`` (a file), ``--runtime-env-json``,
    ``--working-dir`` and ``--env``, later ones overriding earlier ones."""
    env: dict[str, object] = {}
    if args.runtime_env is not None:
        env.update(load_file(args.runtime_env))
    inline = _json_option(args.runtime_env_json, "--runtime-env-json")
    if inline is not None:
        if not isinstance(inline, dict):
            raise UsageError("--runtime-env-json: expected a JSON object")
        env.update(inline)
    if args.working_dir is not None:
        env.update(working_dir=args.working_dir)
    if args.env:
        given = env.pop("env_vars", None)
        variables: dict[str, object] = dict(given) if isinstance(given, Mapping) else {}
        variables.update(key_values(args.env, "--env"))
        env.update(env_vars=variables)
    return env or None


def _submit_request(args: argparse.Namespace) -> SubmitRequest:
    """The submission, every argument checked (nothing is sent); local directories of its
    runtime environment are uploaded by the submit itself."""
    return flarekit.ray.build_submit_request(
        _entrypoint(args.command),
        submission_id=args.submission_id,
        runtime_env=_runtime_env(args),
        metadata=key_values(args.metadata, "--metadata") or None,
        entrypoint_num_cpus=args.entrypoint_num_cpus,
        entrypoint_num_gpus=args.entrypoint_num_gpus,
        entrypoint_memory=args.entrypoint_memory,
        entrypoint_resources=_json_option(args.entrypoint_resources, "--entrypoint-resources"),
    )


def _submit(args: argparse.Namespace) -> int:
    open_dashboard = _check_target(args)
    request = _submit_request(args)
    dashboard = open_dashboard()
    submission_id = dashboard.submit(
        request.entrypoint,
        submission_id=request.submission_id,
        runtime_env=request.runtime_env,
        metadata=request.metadata,
        entrypoint_num_cpus=request.entrypoint_num_cpus,
        entrypoint_num_gpus=request.entrypoint_num_gpus,
        entrypoint_memory=request.entrypoint_memory,
        entrypoint_resources=request.entrypoint_resources,
    )
    table = args.output == "table"
    if table:
        args.out.write(f"Ray job {submission_id} submitted to {dashboard.address}\n")
        args.out.flush()
    if args.no_wait:
        _show(dashboard.get(submission_id), args.output, "", args)
        return int(ExitCode.OK)
    stop = f"flarekit ray job stop {submission_id} {_target_words(args)}"
    left = f"Ray job {submission_id} keeps running on the cluster: stop it with `{stop}`"
    with leaving(left):
        if table:
            for chunk in dashboard.follow_logs(submission_id, poll=_POLL, timeout=args.timeout):
                args.out.write(chunk)
                args.out.flush()
            final = dashboard.get(submission_id)
        else:
            final = dashboard.wait(submission_id, timeout=args.timeout or _FOREVER)
    _show(final, args.output, _summary(final), args)
    return _failed(final, args)


def _status(args: argparse.Namespace) -> int:
    submission_id = _job_id(args.submission_id)
    job = _check_target(args)().get(submission_id)
    _show(job, args.output, _describe(job), args)
    return int(ExitCode.OK)


def _last_lines(text: str, count: int | None) -> str:
    if count is None:
        return text
    lines = text.splitlines(keepends=True)
    return "".join(lines[len(lines) - count :]) if count else ""


def _logs(args: argparse.Namespace) -> int:
    submission_id = _job_id(args.submission_id)
    dashboard = _check_target(args)()
    if not args.follow:
        args.out.write(_last_lines(dashboard.logs(submission_id), args.tail))
        args.out.flush()
        return int(ExitCode.OK)
    first = True
    for chunk in dashboard.follow_logs(submission_id, poll=_POLL, timeout=args.timeout):
        args.out.write(_last_lines(chunk, args.tail) if first else chunk)
        args.out.flush()
        first = False
    return int(ExitCode.OK)


def _stop(args: argparse.Namespace) -> int:
    submission_id = _job_id(args.submission_id)
    dashboard = _check_target(args)()
    stopping = dashboard.stop(submission_id)
    if not stopping or args.no_wait:
        job = dashboard.get(submission_id)
        done = "" if stopping else " (it had already ended)"
        _show(job, args.output, _summary(job) + done, args)
        return int(ExitCode.OK)
    try:
        job = dashboard.wait(submission_id, timeout=args.timeout)
    except flarekit.ray.RayJobTimeout as exc:
        raise WaitTimeout(
            what=f"Ray job {submission_id} to stop",
            timeout=args.timeout,
            elapsed=args.timeout,
            last_state=exc.last_status,
        ) from None
    _show(job, args.output, _summary(job), args)
    return int(ExitCode.OK)


def _delete(args: argparse.Namespace) -> int:
    submission_id = _job_id(args.submission_id)
    _check_target(args)().delete(submission_id)
    if args.output == "name":
        args.out.write(submission_id + "\n")
    else:
        args.out.write(f"Ray job {submission_id} deleted\n")
    args.out.flush()
    return int(ExitCode.OK)


_HEADER = ("SUBMISSION ID", "TYPE", "STATUS", "ENTRYPOINT")
_WIDE = (*_HEADER[:3], "JOB ID", "STARTED", "ENDED", "MESSAGE", "ENTRYPOINT")


def _short(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _ENTRYPOINT_WIDTH else line[: _ENTRYPOINT_WIDTH - 3] + "..."


def _rows(jobs: Iterable[JobDetails], wide: bool) -> list[tuple[object, ...]]:
    rows: list[tuple[object, ...]] = []
    for job in jobs:
        first = (job.submission_id, job.type, job.status.value)
        if wide:
            when = (job.started_at, job.ended_at)
            rows.append((*first, job.job_id, *when, job.message, " ".join(job.entrypoint.split())))
        else:
            rows.append((*first, _short(job.entrypoint)))
    return rows


def _list(args: argparse.Namespace) -> int:
    dashboard = _check_target(args)()
    jobs = sorted(dashboard.list_jobs(), key=lambda j: (j.start_time or 0, _id_of(j)))
    if args.output in ("yaml", "json"):
        args.out.write(dump([_data(j) for j in jobs], args.output))
    elif args.output == "name":
        args.out.write("".join(_id_of(j) + "\n" for j in jobs))
    else:
        wide = args.output == "wide"
        title = f"Ray jobs at {dashboard.address}: {len(jobs)}"
        table = text_table(_rows(jobs, wide), header=_WIDE if wide else _HEADER, title=title)
        args.out.write((table if jobs else title) + "\n")
    args.out.flush()
    return int(ExitCode.OK)


# -- parsers -------------------------------------------------------------------------------------


def _dashboard_options(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("Ray dashboard")
    group.add_argument(
        "--address", help="the dashboard URL (default: $RAY_ADDRESS when it is a URL)"
    )
    group.add_argument(
        "--cluster",
        metavar="NAME",
        help="the dashboard of this Ray cluster on Kubernetes (its Route, Ingress or HTTPRoute)",
    )
    group.add_argument(
        "--header",
        action="append",
        metavar="'NAME: VALUE'",
        help="HTTP header to send, e.g. 'Authorization: Bearer TOKEN' (repeatable)",
    )
    group.add_argument(
        "--certificate-authority", metavar="FILE", help="CA bundle to verify the dashboard with"
    )
    group.add_argument(
        "--insecure-skip-tls-verify",
        action="store_true",
        help="do not verify the dashboard's TLS certificate",
    )


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text}: a line count is 0 or more")
    return value


def _timeout(text: str) -> float:
    """A ``--timeout`` for a wait: more than 0 seconds."""
    value = seconds(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"{text}: a timeout here is more than 0 seconds")
    return value


def _with_id(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help: str
) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help=help)
    p.add_argument("submission_id", metavar="SUBMISSION_ID", help="the job's submission id")
    _dashboard_options(p)
    return p


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``ray job`` and its subcommands."""
    ray = commands.add_parser(
        "ray",
        help="jobs on a Ray cluster's dashboard (Ray's Jobs API)",
        description=plain_text(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    groups = ray.add_subparsers(dest="ray_group", required=True, metavar="GROUP")
    job = groups.add_parser(
        "job",
        help="submit, follow, list and stop Ray jobs",
        description=plain_text(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = job.add_subparsers(dest="action", required=True, metavar="ACTION")

    submit = sub.add_parser(
        "submit",
        help="submit a job and follow its output until it ends",
        usage="flarekit ray job submit (--address URL | --cluster NAME) [options] -- COMMAND ...",
    )
    _dashboard_options(submit)
    submit.add_argument("--submission-id", help="the job's id (default: Ray makes one)")
    submit.add_argument("--runtime-env", metavar="FILE", help="runtime environment (YAML/JSON)")
    submit.add_argument("--runtime-env-json", metavar="JSON", help="runtime environment (JSON)")
    submit.add_argument(
        "--working-dir", metavar="DIR", help="directory to run in (a local one is uploaded)"
    )
    submit.add_argument("--env", action="append", metavar="KEY=VALUE", help="environment variable")
    submit.add_argument("--metadata", action="append", metavar="KEY=VALUE", help="job metadata")
    submit.add_argument("--entrypoint-num-cpus", type=float, help="CPUs for the entrypoint")
    submit.add_argument("--entrypoint-num-gpus", type=float, help="GPUs for the entrypoint")
    submit.add_argument("--entrypoint-memory", type=int, help="memory (bytes) for the entrypoint")
    submit.add_argument(
        "--entrypoint-resources", metavar="JSON", help='custom resources, e.g. {"TPU": 1}'
    )
    submit.add_argument("--no-wait", action="store_true", help="return once it is submitted")
    submit.add_argument(
        "--timeout", type=_timeout, help="seconds to follow it (default: until it ends)"
    )
    add_common(submit)
    submit.set_defaults(run=_submit, takes_command=True)

    status = _with_id(sub, "status", "a job's status and details")
    add_common(status)
    status.set_defaults(run=_status)

    logs = _with_id(sub, "logs", "a job's output")
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing until it ends")
    logs.add_argument("--tail", type=_non_negative, help="only the last N lines")
    logs.add_argument("--timeout", type=_timeout, help="with -f: stop after this many seconds")
    add_common(logs, formats=("table",))
    logs.set_defaults(run=_logs)

    listing = sub.add_parser("list", help="every job the dashboard knows")
    _dashboard_options(listing)
    add_common(listing, formats=LIST_FORMATS)
    listing.set_defaults(run=_list)

    stop = _with_id(sub, "stop", "stop a job and wait until Ray reports it STOPPED")
    stop.add_argument("--no-wait", action="store_true", help="return once stopping is asked for")
    stop.add_argument("--timeout", type=_timeout, default=60.0, help="seconds to wait (60)")
    add_common(stop, formats=GET_FORMATS)
    stop.set_defaults(run=_stop)

    delete = _with_id(sub, "delete", "delete a finished job's record and output")
    add_common(delete, formats=DELETE_FORMATS)
    delete.set_defaults(run=_delete)
