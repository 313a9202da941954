"""``flarekit version``: this client, its models, and what the connected cluster runs.

Why: most "it does not work" reports come down to versions: which flarekit, which generated
models, and which operator releases the cluster has. The server side is read from
discovery (one request): the API groups flarekit works with and the versions the server
serves of each. ``--releases`` also tells which operator release each one runs, from
``flarekit.compat._negotiate`` when that module is installed: it reads every operator's CRDs
and compares them with the pinned ones, which takes seconds, so it is asked for, not the
default (a plain ``version`` stays quick, as ``kubectl version`` is). ``--client`` skips the
server.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import flarekit.client
from flarekit._products import PRODUCTS as _PRODUCTS
from flarekit._tables import text_table
from flarekit.cli._common import add_common, connect
from flarekit.cli._output import DATA_FORMATS, emit, to_data

if TYPE_CHECKING:
    from flarekit import Client

__all__ = [
    "ClientVersions",
    "ServedGroup",
    "VersionAction",
    "client_text",
    "client_versions",
    "register",
    "served_groups",
]

NEGOTIATE_MODULE = "flarekit.compat._negotiate"


@dataclass(frozen=True)
class ClientVersions:
    """flarekit's version, and which generator and pinned upstream releases built its models."""

    flarekit: str
    models_generator: str
    models_lock: str = ""
    models_releases: dict[str, list[str]] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """The client part of ``flarekit version`` and ``flarekit --version``."""
        lines = [f"flarekit          {self.flarekit}"]
        lines.append(f"models generator  {self.models_generator}")
        if self.models_lock:
            lines.append(f"models lock       {self.models_lock}")
        for family, tags in sorted(self.models_releases.items()):
            lines.append(f"  {family:18} {', '.join(tags)}")
        return lines


def client_versions() -> ClientVersions:
    """This client's versions (see `ClientVersions`)."""
    from importlib import metadata

    try:
        flarekit = metadata.version("flarekit")
    except metadata.PackageNotFoundError:
        flarekit = "unknown (not installed as a distribution)"
    try:
        models = importlib.import_module("flarekit_models")
        generator = str(models.GENERATOR_VERSION)
        lock = str(getattr(models, "SOURCE_LOCK", ""))
        releases = {f: list(tags) for f, tags in getattr(models, "PINNED_RELEASES", {}).items()}
    except (ImportError, AttributeError):
        return ClientVersions(flarekit, "flarekit_models is not installed")
    return ClientVersions(flarekit, generator, lock, releases)


def client_text(versions: ClientVersions) -> list[str]:
    """The client part of ``flarekit version`` and ``flarekit --version``, as lines."""
    return versions.lines()


@dataclass(frozen=True)
class ServedGroup:
    """An API group, the software that brings it (for flarekit's groups), and the versions
    the server serves of it, the preferred one first (none: not served)."""

    group: str
    product: str
    versions: list[str]


class VersionAction(argparse.Action):
    """``flarekit --version``: prints :func:`client_text` and exits (read only when asked)."""

    def __init__(self, option_strings: list[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        # Like argparse's own --version: standard output, exit status 0.
        sys.stdout.write("\n".join(client_text(client_versions())) + "\n")
        parser.exit()


def served_groups(client: Client, everything: bool = False) -> list[ServedGroup]:
    """The API groups flarekit works with (all groups with `everything`) and the versions the
    server serves of each, the preferred one first; groups not served have no versions."""
    raw = flarekit.client.get_bytes(client, "/apis")
    listing = (
        flarekit.client.read_document(flarekit.client.APIGroupList, "/apis", raw)
        if raw is not None
        else flarekit.client.APIGroupList()
    )
    served = {group.name: group.served_versions() for group in listing.groups}
    names = sorted({*served, *_PRODUCTS}) if everything else sorted(_PRODUCTS)
    return [ServedGroup(name, _PRODUCTS.get(name, ""), served.get(name, [])) for name in names]


def _kubernetes_version(client: Client) -> str:
    """The server's Kubernetes release ("" when it does not say: some servers hide /version)."""
    try:
        raw = flarekit.client.get_bytes(client, "/version")
        return (
            flarekit.client.read_document(
                flarekit.client.ServerVersion, "/version", raw
            ).git_version
            if raw
            else ""
        )
    except Exception:  # some servers hide /version; the rest still helps
        return ""


def _server(client: Client, everything: bool, negotiate: bool) -> tuple[dict[str, object], str]:
    """The server part of the answer, as data and as text."""
    kubernetes = _kubernetes_version(client)
    lines = [f"server            {client.server} {kubernetes}".rstrip(), ""]
    if negotiate and importlib.util.find_spec(NEGOTIATE_MODULE) is None:
        lines.append("(operator releases: flarekit.compat is not installed; served versions)")
    if negotiate and importlib.util.find_spec(NEGOTIATE_MODULE) is not None:
        releases = importlib.import_module(NEGOTIATE_MODULE).negotiate(client)
        lines.append(str(releases.table()))
        found: dict[str, object] = {"releases": to_data(releases)}
    else:
        groups = served_groups(client, everything)
        rows = [(g.group, g.product, ", ".join(g.versions) or "not served") for g in groups]
        lines.append(text_table(rows, header=("API GROUP", "SOFTWARE", "SERVED VERSIONS")))
        found = {"api_groups": [asdict(g) for g in groups]}
    return {"url": client.server, "kubernetes": kubernetes, **found}, "\n".join(lines)


def _version(args: argparse.Namespace) -> int:
    versions = client_versions()
    text = client_text(versions)
    data: dict[str, object] = {"client": asdict(versions)}
    if not args.client:
        server, server_text = _server(connect(args), args.all_groups, args.releases)
        data = {**data, "server": server}
        text.append(server_text)
    emit(data, args.output, args.out, table="\n".join(text))
    return 0


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``version``."""
    p = commands.add_parser("version", help="client, models and server versions")
    p.add_argument("--client", action="store_true", help="only this client (no cluster needed)")
    p.add_argument(
        "--all-groups", action="store_true", help="every served API group, not only flarekit's"
    )
    p.add_argument(
        "--releases",
        action="store_true",
        help="also which release of each operator the cluster runs (reads their CRDs: slower)",
    )
    add_common(p, formats=DATA_FORMATS)
    p.set_defaults(run=_version)
