"""``flarekit job submit|status|logs|stop|delete|list``: RayJobs and TrainJobs.

``--kind rayjob`` is a KubeRay RayJob (an entrypoint on an existing Ray cluster, or on one
made for the job from ``cluster_config``); ``--kind trainjob`` is a Kubeflow Trainer TrainJob
from a runtime. ``submit`` takes the kind from ``--kind`` or the file's ``kind:``; the other
commands find the job by name and need ``--kind`` only when both kinds have that name.
Parameters are those of :class:`flarekit.RayJob` and :class:`flarekit.TrainJob`; the command
after ``--`` is the RayJob's entrypoint or the TrainJob's command::

    flarekit job submit hello --kind rayjob --cluster-name demo -- python -c "print(1)"
    flarekit job submit train --kind trainjob --image pytorch/pytorch:2.7.1 --num-nodes 2 \\
        -- torchrun train.py
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import inspect
import shlex
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import flarekit
import flarekit.job
from flarekit._events import event_line
from flarekit._objects import metadata_of
from flarekit._tables import Age
from flarekit._validation import ConfigError, Problem
from flarekit._wait import wait_until
from flarekit.cli._cluster_config import cluster_config
from flarekit.cli._common import (
    add_common,
    connect,
    namespace_of,
    plain_text,
    seconds,
    target_flags,
)
from flarekit.cli._exit import UsageError, leaving
from flarekit.cli._listing import Listed, Listing, add_listing_flags, show, watch
from flarekit.cli._output import DELETE_FORMATS, LIST_FORMATS, emit, emit_objects, object_name
from flarekit.cli._params import check_names, key_values, load_file, merge, parse_set
from flarekit_models.ray import v1 as ray_v1
from flarekit_models.trainer import v1alpha1 as trainer_v1alpha1

if TYPE_CHECKING:
    from flarekit import Client, RayJob, TrainJob
    from flarekit.job import JobStatus
    from flarekit_models import KubeResource

__all__ = ["JobNotFound", "register"]

KINDS = ("rayjob", "trainjob")
#: Parameters the command line cannot give (Python objects).
_NOT_FROM_FILES = frozenset({"self", "client", "func", "func_args"})


class JobNotFound(LookupError):
    """No RayJob or TrainJob of that name in the namespace."""


def _kind_of(value: object, source: str) -> str:
    kind = str(value).lower()
    if kind not in KINDS:
        raise UsageError(f"{source} {value!r}: the job kind is rayjob or trainjob")
    return kind


def _trainjob_params() -> list[str]:
    names = inspect.signature(flarekit.TrainJob.__init__).parameters
    return [n for n in names if n not in _NOT_FROM_FILES]


def _rayjob_params() -> list[str]:
    return [
        f.name
        for f in dataclasses.fields(flarekit.RayJob)
        if f.init and f.name not in _NOT_FROM_FILES
    ]


def _flags(args: argparse.Namespace, kind: str) -> dict[str, object]:
    common = {
        "name": args.name,
        "local_queue": args.local_queue,
        "priority_class": args.priority_class,
        "no_queue": True if args.no_queue else None,
    }
    if kind == "rayjob":
        entrypoint = shlex.join(args.command) if args.command else None
        ray_only = {"entrypoint": entrypoint, "cluster_name": args.cluster_name}
        return {**common, **ray_only}
    resources = {"cpu": args.cpu, "memory": args.memory, "gpu": args.gpus}
    train_only = {
        "runtime": args.runtime,
        "image": args.image,
        "command": list(args.command) if args.command else None,
        "num_nodes": args.num_nodes,
        "num_proc_per_node": args.procs_per_node,
        "resources_per_node": {k: v for k, v in resources.items() if v is not None} or None,
    }
    return {**common, **train_only}


def _misplaced_flags(args: argparse.Namespace, kind: str) -> None:
    other = {
        "rayjob": ("runtime", "image", "num_nodes", "procs_per_node", "cpu", "memory", "gpus"),
        "trainjob": ("cluster_name",),
    }[kind]
    given = [f"--{name.replace('_', '-')}" for name in other if getattr(args, name) is not None]
    if given:
        raise UsageError(f"{', '.join(given)}: not a {kind} option")


def job_params(args: argparse.Namespace) -> tuple[str, dict[str, object]]:
    """The kind and parameters the file and flags describe (names checked, values not)."""
    params = load_file(args.filename)
    kind_in_file = params.pop("kind", None)
    if args.kind is not None:
        kind = _kind_of(args.kind, "--kind")
    elif kind_in_file is not None:
        kind = _kind_of(kind_in_file, "kind:")
    else:
        raise UsageError("say which kind of job: --kind rayjob or --kind trainjob (or kind: in -f)")
    _misplaced_flags(args, kind)
    merged = merge(params, _flags(args, kind), parse_set(args.set))
    if args.env:  # a TrainJob's env, a RayJob's runtime_env.env_vars
        env = key_values(args.env, "--env")
        if kind == "trainjob":
            merged["env"] = _added(merged.get("env"), env, "env")
        else:
            runtime_env = _added(merged.get("runtime_env"), {}, "runtime_env")
            runtime_env["env_vars"] = _added(
                runtime_env.get("env_vars"), env, "runtime_env.env_vars"
            )
            merged["runtime_env"] = runtime_env
    if args.label:
        merged["labels"] = _added(merged.get("labels"), key_values(args.label, "--label"), "labels")
    if args.namespace:
        merged["namespace"] = args.namespace
    if not merged.get("name"):
        raise UsageError("the job needs a name: give it as an argument or as name: in -f")
    if kind == "trainjob":
        check_names(merged, _trainjob_params(), "TrainJob")
        return kind, merged
    check_names(merged, _rayjob_params(), "RayJob")
    config = merged.get("cluster_config")
    if isinstance(config, Mapping):
        config = {"name": merged["name"], **config}
        namespace = merged.get("namespace")  # not a string: the RayJob names it
        merged["cluster_config"] = cluster_config(
            config, namespace if isinstance(namespace, str) else None, where="cluster_config."
        )
    if not merged.get("entrypoint"):
        raise UsageError("a RayJob needs an entrypoint: the command after --, or entrypoint: in -f")
    return kind, merged


def _added(value: object, pairs: Mapping[str, str], name: str) -> dict[str, object]:
    """The file's mapping parameter `name` (`value`, None when not given) with the flags'
    `pairs` added (they win)."""
    if value is None:
        return dict(pairs)
    if not isinstance(value, Mapping):
        raise ConfigError([Problem(name, value, "expected a mapping", "KEY: VALUE pairs")])
    return {**{str(k): v for k, v in value.items()}, **pairs}


def make_job(
    kind: str, params: Mapping[str, object], client: Client | None
) -> flarekit.RayJob | flarekit.TrainJob:
    """The job, validated as a whole (`ConfigError` lists every problem); nothing is sent."""
    # The constructors check the values (read from YAML, so of any type) and name each wrong
    # one: called through a Callable[..., T] they take them as they are.
    job_of: Callable[..., flarekit.RayJob | flarekit.TrainJob] = (
        flarekit.TrainJob if kind == "trainjob" else flarekit.RayJob
    )
    return job_of(**params, client=client)


# -- finding an existing job -----------------------------------------------------------------


def find_job(
    client: Client, namespace: str, name: str, kind: str | None
) -> flarekit.RayJob | flarekit.TrainJob:
    """The RayJob or TrainJob `name` (``kind`` None: whichever exists; both is ambiguous)."""
    found: list[flarekit.RayJob | flarekit.TrainJob] = []
    if kind in (None, "rayjob"):
        with contextlib.suppress(flarekit.NotFound):
            found.append(flarekit.RayJob.from_existing(name, namespace, client=client))
    if kind in (None, "trainjob"):
        with contextlib.suppress(flarekit.NotFound):
            found.append(flarekit.TrainJob.from_existing(name, namespace, client=client))
    if len(found) > 1:
        raise UsageError(
            f"both a RayJob and a TrainJob are named {name!r} in namespace {namespace!r}: "
            "add --kind rayjob or --kind trainjob"
        )
    if not found:
        what = {"rayjob": "RayJob", "trainjob": "TrainJob", None: "RayJob or TrainJob"}[kind]
        raise JobNotFound(f"no {what} named {name!r} in namespace {namespace!r}")
    return found[0]


# -- commands ------------------------------------------------------------------------------------


def _submit(args: argparse.Namespace) -> int:
    kind, params = job_params(args)
    make_job(kind, params, None)  # validate before connecting: invalid input needs no cluster
    client = connect(args)
    job = make_job(kind, params, client).submit()
    if args.wait:
        what = "RayJob" if kind == "rayjob" else "TrainJob"
        namespace = job.namespace or namespace_of(args, client)
        remove = f"flarekit job delete {job.name} --kind {kind} {target_flags(args, namespace)}"
        left = f"{what} {namespace}/{job.name} is left on the cluster: remove it with `{remove}`"
        with leaving(left):
            status = job.wait(timeout=args.timeout)
    else:
        status = job.status()
    _emit_job(client, job, status, args)
    return 0


def _resource(client: Client, job: flarekit.RayJob | TrainJob) -> KubeResource:
    """The job's object as stored (what ``-o yaml|json|name`` print)."""
    kind: type[KubeResource] = (
        ray_v1.RayJob if isinstance(job, flarekit.RayJob) else trainer_v1alpha1.TrainJob
    )
    return client.get(kind, job.name, namespace=job.namespace)


def _emit_job(
    client: Client, job: RayJob | TrainJob, status: object, args: argparse.Namespace
) -> None:
    if args.output == "table":
        emit(status, "table", args.out)
    else:
        emit_objects([_resource(client, job)], args.output, args.out, table="", single=True)


def _status(args: argparse.Namespace) -> int:
    client = connect(args)
    job = find_job(client, namespace_of(args, client), args.name, args.kind)
    _emit_job(client, job, job.status(), args)
    return 0


def _logs(args: argparse.Namespace) -> int:
    client = connect(args)
    namespace = namespace_of(args, client)
    job = find_job(client, namespace, args.name, args.kind)
    if args.prefix:
        if args.node is not None:
            raise UsageError("--node reads one node; --prefix reads every pod: leave out one")
        text = job.logs(follow=args.follow, tail=args.tail, all_nodes=True)
    elif isinstance(job, flarekit.RayJob):
        if args.node is not None:
            raise UsageError("--node is a trainjob option (a RayJob has one submitter log)")
        text = job.logs(follow=args.follow, tail=args.tail)
    else:
        text = job.logs(node=args.node or 0, follow=args.follow, tail=args.tail)
    if isinstance(text, str):
        emit(None, "table", args.out, table=text)
        return 0
    for line in text:
        args.out.write(line + "\n")
        args.out.flush()
    return 0


def _stopped(status: JobStatus) -> bool:
    """Whether the operators have stopped the job: KubeRay reports a RayJob Suspended (it
    passes through Suspending while it deletes the job's cluster), a TrainJob reads as
    Suspended; a job that ended meanwhile is left as it ended."""
    if status.finished:
        return True
    if isinstance(status, flarekit.job.RayJobStatus):
        return status.deployment_status == "Suspended"
    return status.state is flarekit.job.JobState.SUSPENDED


def _stop(args: argparse.Namespace) -> int:
    """Ask for the stop, then (unless --no-wait) wait until the operators have stopped the
    job: right after the request a queued job still reads as it was (Running), since Kueue
    and the job's operator act on it only afterwards."""
    client = connect(args)
    job = find_job(client, namespace_of(args, client), args.name, args.kind)
    status = job.stop()
    if not args.no_wait:
        what = f"{status.kind} {status.namespace}/{status.name} to stop"
        read: Callable[[], JobStatus] = job.status
        status = wait_until(
            read,
            _stopped,
            None,
            timeout=args.timeout,
            describe=what,
            poll=0.2,
            max_poll=2.0,
            progress=False,
            state=lambda current: current.summary,
        )
    _emit_job(client, job, status, args)
    return 0


def _resume(args: argparse.Namespace) -> int:
    """Run a stopped job again (Kueue queues it again where it was queued)."""
    client = connect(args)
    job = find_job(client, namespace_of(args, client), args.name, args.kind)
    _emit_job(client, job, job.resume(), args)
    return 0


def _events(args: argparse.Namespace) -> int:
    """The Kubernetes events about the job, its operators' objects and its pods, oldest
    first: where a job that does not start says why (quota, scheduling, image pulls)."""
    client = connect(args)
    job = find_job(client, namespace_of(args, client), args.name, args.kind)
    found = job.events()
    if args.output not in ("table", "wide"):
        emit_objects(found, args.output, args.out, table="")
        return 0
    lines = [event_line(event) for event in found]
    what = f"{type(job).__name__} {job.namespace or namespace_of(args, client)}/{job.name}"
    emit(None, "table", args.out, table="\n".join(lines) or f"no events about {what}")
    return 0


def _delete(args: argparse.Namespace) -> int:
    client = connect(args)
    namespace = namespace_of(args, client)
    job: RayJob | TrainJob | None
    try:
        job = find_job(client, namespace, args.name, args.kind)
    except JobNotFound:
        if not args.ignore_not_found:
            raise
        job = None
    if job is not None:
        resource = _resource(client, job)
        job.delete()
        if args.output == "name":
            args.out.write(object_name(resource) + "\n")
            return 0
    elif args.output == "name":
        return 0
    what = f"{type(job).__name__ if job is not None else 'job'} {namespace}/{args.name}"
    table = f"{what} deleted" if job is not None else f"{what} not found: nothing to delete"
    emit(None, "table", args.out, table=table)
    return 0


def list_jobs(
    client: Client, namespace: str, kind: str | None, label_selector: str | None = None
) -> list[Listed]:
    """Every RayJob and TrainJob in `namespace` (`ALL_NAMESPACES` for all) with its state,
    sorted by namespace, name and kind (kinds the cluster does not serve are skipped)."""
    rows: list[Listed] = []
    chosen: flarekit.job.JobKind | None = "rayjob" if kind == "rayjob" else None
    if kind == "trainjob":
        chosen = "trainjob"
    for job in flarekit.job.find_jobs(client, namespace, chosen, label_selector):
        s = job.status
        meta = metadata_of(job.resource)
        created = Age(meta.creation_timestamp if meta is not None else None)
        row = (s.namespace, s.name, s.kind, s.summary, job.queue, created)
        rows.append(_row(row, s.message or s.reason, job.resource))
    return rows


def _row(
    cells: tuple[str, str, str, str, str | None, Age], detail: str, obj: KubeResource
) -> Listed:
    """A listing row: NAMESPACE NAME KIND STATE QUEUE AGE, and the wide form's MESSAGE."""
    namespace, name, kind = cells[0], cells[1], cells[2]
    return Listed((namespace, name, kind), cells, (*cells, detail or None), obj)


def _listing(client: Client, namespace: str, args: argparse.Namespace) -> Listing:
    every = namespace == flarekit.ALL_NAMESPACES
    header: tuple[str, ...] = ("NAME", "KIND", "STATE", "QUEUE", "AGE")

    def read() -> list[Listed]:
        found = list_jobs(client, namespace, args.kind, args.selector)
        if every:
            return found
        return [Listed(r.key, r.row[1:], r.wide[1:], r.resource) for r in found]

    def title(count: int) -> str:
        where = "in all namespaces" if every else f"in namespace {namespace}"
        selected = f" with labels {args.selector}" if args.selector else ""
        return f"Jobs {where}{selected}: {count}"

    if every:
        header = ("NAMESPACE", *header)
    kinds = {"rayjob": (ray_v1.RayJob,), "trainjob": (trainer_v1alpha1.TrainJob,)}.get(
        args.kind or "", (ray_v1.RayJob, trainer_v1alpha1.TrainJob)
    )
    return Listing(header, (*header, "MESSAGE"), title, read, kinds)


def _list(args: argparse.Namespace) -> int:
    client = connect(args)
    namespace = flarekit.ALL_NAMESPACES if args.all_namespaces else namespace_of(args, client)
    listing = _listing(client, namespace, args)
    if args.watch:
        watch(listing, client, namespace, args.output, args.out, timeout=args.timeout)
    else:
        show(listing, args.output, args.out)
    return 0


# -- parsers -------------------------------------------------------------------------------------


def _kind_flag(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument("--kind", choices=KINDS, type=str.lower, help=help)


def _named(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help: str
) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help=help)
    p.add_argument("name", help="the job's name")
    _kind_flag(p, "which kind (needed only when a RayJob and a TrainJob share the name)")
    return p


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``job`` and its subcommands."""
    group = commands.add_parser(
        "job",
        help="RayJobs and TrainJobs",
        description=plain_text(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = group.add_subparsers(dest="action", required=True, metavar="ACTION")

    submit = sub.add_parser(
        "submit",
        help="submit a RayJob or a TrainJob",
        usage="flarekit job submit [NAME] --kind {rayjob,trainjob} [options] [-- COMMAND ...]",
    )
    submit.add_argument("name", nargs="?", help="the job's name (default: name: in -f)")
    _kind_flag(submit, "rayjob or trainjob (default: kind: in -f)")
    submit.add_argument("-f", "--filename", help="YAML/JSON file of the job's parameters")
    submit.add_argument("--local-queue", help="Kueue LocalQueue (default: the namespace's)")
    submit.add_argument("--priority-class", help="Kueue WorkloadPriorityClass")
    submit.add_argument(
        "--no-queue",
        action="store_true",
        help="without a Kueue queue, on purpose (e.g. a namespace that has no LocalQueue)",
    )
    submit.add_argument("--env", action="append", metavar="KEY=VALUE", help="environment variable")
    submit.add_argument("--label", action="append", metavar="KEY=VALUE", help="label on the job")
    submit.add_argument(
        "--set", action="append", metavar="NAME=VALUE", help="any parameter (value read as YAML)"
    )
    submit.add_argument("--cluster-name", help="rayjob: run on this existing Ray cluster")
    submit.add_argument("--runtime", help="trainjob: the training runtime (torch-distributed)")
    submit.add_argument("--image", help="trainjob: the trainer's container image")
    submit.add_argument("--num-nodes", type=int, help="trainjob: number of nodes")
    submit.add_argument("--procs-per-node", type=int, help="trainjob: processes per node")
    submit.add_argument("--cpu", help="trainjob: CPU per node (e.g. 4)")
    submit.add_argument("--memory", help="trainjob: memory per node (e.g. 16Gi)")
    submit.add_argument("--gpus", type=int, help="trainjob: GPUs per node")
    submit.add_argument(
        "--wait",
        action="store_true",
        help="wait until the job finishes (Ctrl-C or the timeout leave it and say how to delete it)",
    )
    submit.add_argument("--timeout", type=seconds, default=3600.0, help="seconds to wait (3600)")
    add_common(submit)
    submit.set_defaults(run=_submit, takes_command=True)

    status = _named(sub, "status", "a job's state")
    add_common(status)
    status.set_defaults(run=_status)

    logs = _named(sub, "logs", "a job's log (the RayJob's submitter, a TrainJob node)")
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing as lines come")
    logs.add_argument(
        "--prefix",
        action="store_true",
        help="every pod of the job, each line prefixed [rank/pod] (with -f: merged as lines "
        "come, until the job ends)",
    )
    logs.add_argument("--tail", type=int, help="only the last N lines")
    logs.add_argument("--node", type=int, help="trainjob: which node's log (0)")
    add_common(logs, formats=("table",))
    logs.set_defaults(run=_logs)

    stop = _named(sub, "stop", "stop a job and keep it (a queued job's Workload is deactivated)")
    stop.add_argument("--no-wait", action="store_true", help="return once the stop is asked for")
    stop.add_argument(
        "--timeout", type=seconds, default=120.0, help="seconds to wait until it stops (120)"
    )
    add_common(stop)
    stop.set_defaults(run=_stop)

    resume = _named(sub, "resume", "run a stopped job again")
    add_common(resume)
    resume.set_defaults(run=_resume)

    events = _named(sub, "events", "the Kubernetes events about a job and its pods")
    add_common(events, formats=LIST_FORMATS)
    events.set_defaults(run=_events)

    delete = _named(sub, "delete", "delete a job")
    delete.add_argument(
        "--ignore-not-found", action="store_true", help="succeed when there is no such job"
    )
    add_common(delete, formats=DELETE_FORMATS)
    delete.set_defaults(run=_delete)

    listing = sub.add_parser("list", help="the jobs in a namespace")
    _kind_flag(listing, "only this kind")
    add_listing_flags(listing, "jobs")
    add_common(listing, formats=LIST_FORMATS)
    listing.set_defaults(run=_list)
