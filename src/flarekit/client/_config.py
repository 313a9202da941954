"""Where the cluster is and how to prove who we are: kubeconfig, token, or service account.

Every source ends as a `kubernetes.client.Configuration` (which owns TLS, proxies, client
certificates and token refresh for exec/OIDC plugins), wrapped in `Credentials` together with
the default namespace. Credentials never show their secrets: the token lives only inside the
Configuration, and the repr names the server and the source, nothing else.

`login()` makes credentials the process default (for flarekit clients created without
explicit credentials and for the official client's default `Configuration`); `logout()`
undoes the latest login and restores exactly what was there before. The `kubernetes` package
is imported only when credentials are made, to keep `import flarekit` cheap.
"""

from __future__ import annotations

import atexit
import base64
import binascii
import contextlib
import logging
import os
import tempfile
import threading
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flarekit.client._errors import KubeconfigError
from flarekit.client._exec import ExecAuth, ExecPlugin
from flarekit.client._kubeconfig import ContextEntry, check_kubeconfig
from flarekit.client._warnings import InsecureConnectionWarning

__all__ = [
    "Credentials",
    "current_credentials",
    "default_credentials",
    "from_kubeconfig",
    "from_token",
    "in_cluster",
    "login",
    "logout",
]

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
DEFAULT_NAMESPACE = "default"


class Credentials:
    """A ready `kubernetes.client.Configuration` plus the namespace to use by default.

    Make them with `from_kubeconfig()`, `from_token()` or `in_cluster()`; pass them to
    `Client(credentials)` or `login()`. `configuration` is the official client's object, so
    `kubernetes.client.ApiClient(creds.configuration)` works for anything flarekit lacks.
    """

    __slots__ = ("configuration", "exec_auth", "namespace", "source")

    def __init__(
        self,
        configuration: Any,
        namespace: str,
        source: str,
        exec_auth: ExecAuth | None = None,
    ) -> None:
        self.configuration = configuration
        self.namespace = namespace
        self.source = source
        #: The kubeconfig user's exec credential plugin, run by the client when a request
        #: needs its credential (None for every other kind of credential).
        self.exec_auth = exec_auth

    @property
    def server(self) -> str:
        return str(self.configuration.host)

    def __repr__(self) -> str:
        return (
            f"Credentials(server={self.server!r}, namespace={self.namespace!r}, "
            f"source={self.source!r})"
        )


def _new_configuration() -> Any:
    """A fresh Configuration. Creating one resets the "urllib3" and "client" loggers to
    WARNING (its `debug` setter runs); keep the levels the application chose instead."""
    from kubernetes import client

    names = ("urllib3", "client")
    levels = {name: logging.getLogger(name).level for name in names}
    configuration = client.Configuration()
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)
    return configuration


def kubeconfig_paths(path: str | os.PathLike[str] | None = None) -> list[Path]:
    """The kubeconfig files to merge: `path`, else `$KUBECONFIG` (a path list), else
    `~/.kube/config`. Read at call time, so a changed environment is honoured."""
    if path is not None:
        return [Path(path).expanduser()]
    env = os.environ.get("KUBECONFIG", "")
    if env.strip():
        return [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    return [Path("~/.kube/config").expanduser()]


def from_kubeconfig(
    path: str | os.PathLike[str] | None = None, context: str | None = None
) -> Credentials:
    """Credentials from a kubeconfig: an explicit file, or the usual places (see
    `kubeconfig_paths`); the current context unless `context` names another.

    A cluster entry with ``insecure-skip-tls-verify: true`` works, and says so with an
    `InsecureConnectionWarning`, as `from_token(insecure_skip_tls_verify=True)` does.
    """
    from kubernetes import config
    from kubernetes.config import kube_config

    paths = kubeconfig_paths(path)
    existing = [p for p in paths if p.is_file()]
    if not existing:
        tried = ", ".join(str(p) for p in paths)
        raise KubeconfigError(f"no kubeconfig file found (looked for {tried})")
    for file in existing:
        check_kubeconfig(file)
    joined = os.pathsep.join(str(p) for p in existing)
    try:
        contexts, current = config.list_kube_config_contexts(config_file=joined)
    except _loader_errors() as exc:
        raise KubeconfigError(f"cannot read kubeconfig {joined}: {_one_line(exc)}") from None
    entries = [ContextEntry.model_validate(c) for c in contexts or []]
    names = [entry.name for entry in entries]
    chosen = context or (ContextEntry.model_validate(current).name if current else None)
    if not chosen or chosen not in names:
        what = f"context {chosen!r} is not defined" if chosen else "no current context is set"
        raise KubeconfigError(
            f"kubeconfig {joined}: {what}; available contexts: {', '.join(names) or '(none)'}"
        )
    configuration = _new_configuration()
    try:
        merged = kube_config.KubeConfigMerger(joined)
        plugin = _take_exec_plugin(merged.config, chosen)
        loader = kube_config.KubeConfigLoader(
            config_dict=merged.config, config_base_path=None, active_context=chosen
        )
        loader.load_and_set(configuration)
    except _loader_errors() as exc:
        raise KubeconfigError(
            f"cannot use context {chosen!r} of kubeconfig {joined}: {_one_line(exc)}"
        ) from None
    if configuration.verify_ssl is False:
        warnings.warn(
            f"TLS certificate verification is disabled for {configuration.host} by context "
            f"{chosen!r} of kubeconfig {joined} (insecure-skip-tls-verify): the connection and "
            "the credentials can be intercepted",
            InsecureConnectionWarning,
            stacklevel=2,
        )
    entry = next(entry for entry in entries if entry.name == chosen)
    namespace = (entry.context.namespace if entry.context else None) or DEFAULT_NAMESPACE
    exec_auth = ExecAuth(plugin, configuration) if plugin is not None else None
    return Credentials(
        configuration, namespace, f"kubeconfig {joined} (context {chosen})", exec_auth
    )


def _entries(nodes: object) -> list[Any]:
    return list(nodes) if isinstance(nodes, list) else []


def _value(node: Any) -> dict[str, Any]:
    """The mapping of a merged kubeconfig entry (the loader wraps each in a `ConfigNode`)."""
    value = getattr(node, "value", node)
    return value if isinstance(value, dict) else {}


def _take_exec_plugin(merged: Any, context: str) -> ExecPlugin | None:
    """The exec plugin of `context`'s user, taken out of the merged kubeconfig so that the
    official loader never runs it (flarekit runs it within bounds, see `_exec`). None when the
    user has no plugin, or a token or auth provider that the loader uses instead."""
    document = _value(merged)
    entry = next(
        (_value(c) for c in _entries(document.get("contexts")) if _value(c).get("name") == context),
        {},
    )
    body = entry.get("context")
    names: dict[str, Any] = body if isinstance(body, dict) else {}
    user_name, cluster_name = names.get("user"), names.get("cluster")
    cluster = next(
        (
            _value(c).get("cluster")
            for c in _entries(document.get("clusters"))
            if _value(c).get("name") == cluster_name
        ),
        None,
    )
    for node in _entries(document.get("users")):
        found = _value(node)
        user = found.get("user")
        if found.get("name") != user_name or not isinstance(user, dict) or not user.get("exec"):
            continue
        if not hasattr(node, "value"):
            return None  # not the loader's merged form: leave it to the loader
        node.value = {**found, "user": {k: v for k, v in user.items() if k != "exec"}}
        if user.get("token") or user.get("tokenFile") or user.get("auth-provider"):
            return None  # the loader's order: these come before the plugin
        source = Path(getattr(node, "path", None) or "kubeconfig")
        return ExecPlugin.from_kubeconfig(
            user["exec"], str(user_name), source, cluster if isinstance(cluster, dict) else None
        )
    return None


def _loader_errors() -> tuple[type[Exception], ...]:
    """What the official kubeconfig loader raises on a file it cannot use. The file's shape
    is checked first (flarekit.client._kubeconfig), so type and key errors here come from values
    it decodes or looks up, such as certificate data that is not base64."""
    import yaml
    from kubernetes.config import ConfigException

    return (
        ConfigException,
        OSError,
        ValueError,
        TypeError,
        KeyError,
        AttributeError,
        yaml.YAMLError,
    )


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:297] + "..."


def _ca_file_from_data(data: str | bytes) -> Path:
    """Write CA certificates (PEM, or base64 of PEM as in kubeconfig) to a private temp file,
    removed at exit (clients made from these credentials read it whenever they connect)."""
    raw = data.encode() if isinstance(data, str) else data
    if b"-----BEGIN" not in raw:
        try:
            raw = base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError):
            raise KubeconfigError("ca_data is neither PEM nor base64-encoded PEM") from None
        if b"-----BEGIN" not in raw:
            raise KubeconfigError("ca_data is neither PEM nor base64-encoded PEM")
    fd, name = tempfile.mkstemp(prefix="flarekit-ca-", suffix=".crt")
    with os.fdopen(fd, "wb") as handle:
        handle.write(raw)
    path = Path(name)
    atexit.register(_remove, path)
    return path


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


def from_token(
    server: str,
    token: str,
    *,
    ca_file: str | os.PathLike[str] | None = None,
    ca_data: str | bytes | None = None,
    insecure_skip_tls_verify: bool = False,
    namespace: str = DEFAULT_NAMESPACE,
) -> Credentials:
    """Credentials from an API server URL and a bearer token.

    The server certificate is checked against `ca_file` or `ca_data` (PEM), else against the
    system's trusted CAs. `insecure_skip_tls_verify=True` switches verification off, and says
    so with an `InsecureConnectionWarning`: anyone on the path could then read the token.
    """
    if not server.startswith("https://"):
        raise KubeconfigError(f"server must be an https:// URL, got {server!r}")
    if not token or token != token.strip() or any(c.isspace() for c in token):
        raise KubeconfigError("token must be a non-empty string without whitespace")
    if ca_file is not None and ca_data is not None:
        raise KubeconfigError("pass either ca_file or ca_data, not both")
    configuration = _new_configuration()
    configuration.host = server.rstrip("/")
    configuration.api_key = {"authorization": f"Bearer {token}"}
    if ca_file is not None:
        if not Path(ca_file).is_file():
            raise KubeconfigError(f"ca_file {os.fspath(ca_file)!r} does not exist")
        configuration.ssl_ca_cert = os.fspath(ca_file)
    elif ca_data is not None:
        configuration.ssl_ca_cert = str(_ca_file_from_data(ca_data))
    if insecure_skip_tls_verify:
        warnings.warn(
            f"TLS certificate verification is disabled for {configuration.host}: the connection "
            "and the token can be intercepted",
            InsecureConnectionWarning,
            stacklevel=2,
        )
        configuration.verify_ssl = False
    return Credentials(configuration, namespace, f"token for {configuration.host}")


def in_cluster(
    *,
    directory: str | os.PathLike[str] = SERVICE_ACCOUNT_DIR,
    environ: Mapping[str, str] | None = None,
) -> Credentials:
    """Credentials of the pod's service account (token, CA and namespace in `directory`, the
    API address in `KUBERNETES_SERVICE_HOST`/`_PORT`); the token is re-read as it rotates."""
    from kubernetes.config import ConfigException, incluster_config

    folder = Path(directory)
    configuration = _new_configuration()
    loader = incluster_config.InClusterConfigLoader(
        token_filename=str(folder / "token"),
        cert_filename=str(folder / "ca.crt"),
        try_refresh_token=True,
        environ=os.environ if environ is None else environ,
    )
    try:
        loader.load_and_set(configuration)
    except (ConfigException, OSError) as exc:
        raise KubeconfigError(f"not running in a cluster with a service account: {exc}") from None
    namespace_file = folder / "namespace"
    namespace = DEFAULT_NAMESPACE
    if namespace_file.is_file():
        namespace = namespace_file.read_text().strip() or DEFAULT_NAMESPACE
    return Credentials(configuration, namespace, f"service account in {folder}")


# -- the process default ---------------------------------------------------------------------

_lock = threading.Lock()
_logins: list[tuple[Credentials, Any]] = []


def login(credentials: Credentials) -> Credentials:
    """Make `credentials` the default for new clients, and for the official client's default
    `Configuration`, until `logout()`. Logins nest: each logout undoes the latest one."""
    from kubernetes import client

    with _lock:
        previous = client.Configuration._default
        client.Configuration.set_default(credentials.configuration)
        _logins.append((credentials, previous))
    return credentials


def logout() -> None:
    """Undo the latest `login()`: the previous defaults come back exactly as they were."""
    from kubernetes import client

    with _lock:
        if not _logins:
            raise KubeconfigError("logout() without a login(): nothing to undo")
        _, previous = _logins.pop()
        client.Configuration._default = previous


def current_credentials() -> Credentials | None:
    """The credentials of the latest `login()` still in force, if any."""
    with _lock:
        return _logins[-1][0] if _logins else None


def default_credentials() -> Credentials:
    """What a client without explicit credentials uses: the latest login, else the kubeconfig
    from the usual places, else the in-cluster service account."""
    current = current_credentials()
    if current is not None:
        return current
    if any(p.is_file() for p in kubeconfig_paths()):
        return from_kubeconfig()
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        return in_cluster()
    tried = ", ".join(str(p) for p in kubeconfig_paths())
    raise KubeconfigError(
        f"no cluster configured: no login(), no kubeconfig ({tried}) and not running in a "
        "cluster; call flarekit.login(...) or set KUBECONFIG"
    )
