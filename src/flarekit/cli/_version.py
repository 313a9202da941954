"""``flarekit version``: this client, its models, and what the connected cluster runs.

Why: most "it does not work" reports come down to versions: which flarekit, which generated
models, and which operator releases the cluster has. The server side comes from
``flarekit.compat._negotiate`` (operator families, versions and releases) when that module
is installed; otherwise from discovery: the API groups flarekit works with and the versions
the server serves of each. ``--client`` skips the server.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from typing import TYPE_CHECKING, Any

from flarekit._tables import text_table
from flarekit.cli._common import add_common, connect
from flarekit.cli._output import DATA_FORMATS, emit, to_data

if TYPE_CHECKING:
    from flarekit import Client

__all__ = ["VersionAction", "client_text", "client_versions", "register", "served_groups"]

NEGOTIATE_MODULE = "flarekit.compat._negotiate"


def client_versions() -> dict[str, Any]:
    """flarekit's version, and which generator and pinned upstream releases built its models."""
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
        generator, lock, releases = "flarekit_models is not installed", "", {}
    return {
        "flarekit": flarekit,
        "models_generator": generator,
        "models_lock": lock,
        "models_releases": releases,
    }


def client_text(versions: dict[str, Any]) -> list[str]:
    """The client part of ``flarekit version`` and ``flarekit --version``, as lines."""
    lines = [f"flarekit          {versions['flarekit']}"]
    lines.append(f"models generator  {versions['models_generator']}")
    if versions["models_lock"]:
        lines.append(f"models lock       {versions['models_lock']}")
    for family, tags in sorted(versions["models_releases"].items()):
        lines.append(f"  {family:18} {', '.join(tags)}")
    return lines


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


def _get_json(client: Client, path: str) -> Any:
    """GET `path` on the API server as JSON, with flarekit's errors (an empty object on 404)."""
    from flarekit.client._served import get_json

    return get_json(client, path) or {}


def served_groups(client: Client, everything: bool = False) -> list[dict[str, Any]]:
    """The API groups flarekit works with (all groups with `everything`) and the versions the
    server serves of each, the preferred one first; groups not served have no versions."""
    from flarekit._products import PRODUCTS as _PRODUCTS

    body = _get_json(client, "/apis")
    served: dict[str, list[str]] = {}
    for group in body.get("groups") or []:
        versions = [str(v.get("version")) for v in group.get("versions") or []]
        preferred = str((group.get("preferredVersion") or {}).get("version") or "")
        if preferred in versions:
            versions.remove(preferred)
            versions.insert(0, preferred)
        served[str(group.get("name"))] = versions
    names = sorted({*served, *_PRODUCTS}) if everything else sorted(_PRODUCTS)
    return [
        {"group": name, "product": _PRODUCTS.get(name, ""), "versions": served.get(name, [])}
        for name in names
    ]


def _server(client: Client, everything: bool) -> tuple[dict[str, Any], str]:
    """The server part of the answer, as data and as text."""
    info: dict[str, Any] = {"url": client.server}
    try:
        info["kubernetes"] = str(_get_json(client, "/version").get("gitVersion") or "")
    except Exception:  # some servers hide /version; the rest still helps
        info["kubernetes"] = ""
    lines = [f"server            {client.server} {info['kubernetes']}".rstrip()]
    if importlib.util.find_spec(NEGOTIATE_MODULE) is not None:
        negotiate = importlib.import_module(NEGOTIATE_MODULE).negotiate
        releases = negotiate(client)
        info["releases"] = to_data(releases)
        lines += ["", str(releases.table())]
        return info, "\n".join(lines)
    groups = served_groups(client, everything)
    info["api_groups"] = groups
    rows = [(g["group"], g["product"], ", ".join(g["versions"]) or "not served") for g in groups]
    lines += ["", text_table(rows, header=("API GROUP", "SOFTWARE", "SERVED VERSIONS"))]
    return info, "\n".join(lines)


def _version(args: argparse.Namespace) -> int:
    versions = client_versions()
    data: dict[str, Any] = {"client": versions}
    text = client_text(versions)
    if not args.client:
        data["server"], server_text = _server(connect(args), args.all_groups)
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
    add_common(p, formats=DATA_FORMATS)
    p.set_defaults(run=_version)
