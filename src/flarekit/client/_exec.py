"""Exec credential plugins of a kubeconfig (``users[].user.exec``), run within bounds.

Why: a kubeconfig may name a program that prints a token (``aws eks get-token``,
``gke-gcloud-auth-plugin``, ``kubelogin``). The official loader runs it without a time
limit, reads all it prints, leaves its children behind, and only logs a failure, so a
plugin that hangs hangs the caller, one that prints without end exhausts memory, and one
that fails leaves the client sending requests unauthenticated. Here the plugin runs in a
process group of its own with a time limit (`ReadLimits.exec_timeout`) and a bound on what it
may print (`ReadLimits.max_exec_output_bytes`); past either, the whole group is killed. A
plugin that fails, or prints anything but an ExecCredential with a token or a client
certificate, is an `ExecPluginError` naming the plugin (the client raises it as
`Unauthorized`), never a silent fallback. The credential is cached until it expires (or the
server answers 401), as client-go does; what the plugin printed never appears in a message.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from flarekit.client._limits import ReadLimits, describe_bytes

__all__ = ["ExecAuth", "ExecPlugin", "ExecPluginError", "run_plugin"]

#: A credential this close to its expiry is renewed before use.
EXPIRY_MARGIN = datetime.timedelta(seconds=10)
_CHUNK = 65536


class ExecPluginError(Exception):
    """An exec credential plugin gave no usable credential; the message names it and why."""


@dataclass(frozen=True)
class ExecPlugin:
    """One ``exec`` entry of a kubeconfig user, as the plugin is to be run."""

    command: str
    api_version: str
    user: str
    source: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    install_hint: str = ""
    interactive_mode: str = "IfAvailable"
    cluster: Mapping[str, Any] | None = None

    @classmethod
    def from_kubeconfig(
        cls,
        entry: Mapping[str, Any],
        user: str,
        source: Path,
        cluster: Mapping[str, Any] | None,
    ) -> ExecPlugin:
        """The plugin of user `user`'s ``exec`` mapping (checked by `check_kubeconfig`)."""
        cluster_info = None
        if entry.get("provideClusterInfo") and cluster is not None:
            cluster_info = {k: v for k, v in cluster.items() if k != "extensions"}
            for extension in cluster.get("extensions") or ():
                if isinstance(extension, Mapping) and (
                    extension.get("name") == "client.authentication.k8s.io/exec"
                ):
                    cluster_info["config"] = extension.get("extension")
        return cls(
            command=str(entry["command"]),
            api_version=str(entry.get("apiVersion") or ""),
            user=user,
            source=str(source),
            args=tuple(str(a) for a in entry.get("args") or ()),
            env=tuple((str(e["name"]), str(e["value"])) for e in entry.get("env") or ()),
            cwd=str(source.parent),
            install_hint=str(entry.get("installHint") or ""),
            interactive_mode=str(entry.get("interactiveMode") or "IfAvailable"),
            cluster=cluster_info,
        )

    def describe(self) -> str:
        return f"exec credential plugin {self.command!r} of user {self.user!r} in {self.source}"


@dataclass(frozen=True)
class ExecCredential:
    """What a plugin printed: a bearer token, or a client certificate and key (PEM)."""

    token: str | None
    certificate: str | None
    key: str | None
    expires: datetime.datetime | None

    def fresh(self) -> bool:
        if self.expires is None:
            return True
        return datetime.datetime.now(datetime.UTC) + EXPIRY_MARGIN < self.expires


def _interactive(plugin: ExecPlugin) -> bool:
    if plugin.interactive_mode == "Never":
        return False
    stdin = sys.stdin
    return bool(stdin is not None and hasattr(stdin, "isatty") and stdin.isatty())


def _stderr_target() -> int | IO[Any]:
    """The plugin's messages (a device-code login's instructions) go where ours go."""
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return subprocess.DEVNULL
    return sys.stderr


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(5)


def run_plugin(plugin: ExecPlugin, limits: ReadLimits) -> ExecCredential:
    """Run `plugin` once, within `limits`; its credential, or `ExecPluginError`."""
    interactive = _interactive(plugin)
    if plugin.interactive_mode == "Always" and not interactive:
        raise ExecPluginError(
            f"{plugin.describe()} needs an interactive terminal (interactiveMode: Always)"
        )
    spec: dict[str, Any] = {"interactive": interactive}
    if plugin.cluster is not None:
        spec["cluster"] = dict(plugin.cluster)
    env = {**os.environ, **dict(plugin.env)}
    env["KUBERNETES_EXEC_INFO"] = json.dumps(
        {"apiVersion": plugin.api_version, "kind": "ExecCredential", "spec": spec}
    )
    try:
        process = subprocess.Popen(
            [plugin.command, *plugin.args],
            stdin=None if interactive else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=_stderr_target(),
            cwd=plugin.cwd,
            env=env,
            start_new_session=True,  # its own process group, killed as one
        )
    except OSError as exc:
        hint = f" ({plugin.install_hint.strip()})" if plugin.install_hint.strip() else ""
        raise ExecPluginError(
            f"{plugin.describe()} cannot be run: {exc.strerror or exc}{hint}"
        ) from None
    try:
        output = _read_output(process, plugin, limits)
        code = process.wait(max(0.0, limits.exec_timeout))
    except subprocess.TimeoutExpired:
        _kill_group(process)
        raise ExecPluginError(
            f"{plugin.describe()} did not finish within {limits.exec_timeout:g}s "
            "(ReadLimits.exec_timeout); it was stopped"
        ) from None
    except BaseException:
        _kill_group(process)
        raise
    if code != 0:
        _kill_group(process)
        raise ExecPluginError(f"{plugin.describe()} failed with exit code {code}")
    return _parse(output, plugin)


def _read_output(process: subprocess.Popen[bytes], plugin: ExecPlugin, limits: ReadLimits) -> bytes:
    """All the plugin prints on stdout, within the time and size limits."""
    assert process.stdout is not None
    deadline = time.monotonic() + limits.exec_timeout
    chunks: list[bytes] = []
    total = 0
    fd = process.stdout.fileno()
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(remaining):
                raise subprocess.TimeoutExpired(plugin.command, limits.exec_timeout)
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                break
            total += len(chunk)
            if total > limits.max_exec_output_bytes:
                _kill_group(process)
                raise ExecPluginError(
                    f"{plugin.describe()} printed more than "
                    f"{describe_bytes(limits.max_exec_output_bytes)} "
                    "(ReadLimits.max_exec_output_bytes); it was stopped"
                )
            chunks.append(chunk)
    process.stdout.close()
    # Output ended; the process gets what is left of its time to exit.
    remaining = max(0.0, deadline - time.monotonic())
    process.wait(remaining)
    return b"".join(chunks)


def _parse(output: bytes, plugin: ExecPlugin) -> ExecCredential:
    """The credential in the plugin's output; the output itself is never shown (a secret)."""
    name = plugin.describe()
    try:
        data = json.loads(output)
    except ValueError:
        raise ExecPluginError(f"{name} printed something that is not JSON") from None
    if not isinstance(data, dict):
        raise ExecPluginError(f"{name} printed JSON that is not an ExecCredential object")
    if data.get("kind") != "ExecCredential":
        raise ExecPluginError(f"{name} printed an object that is not kind ExecCredential")
    if data.get("apiVersion") != plugin.api_version:
        raise ExecPluginError(
            f"{name} answered in apiVersion {str(data.get('apiVersion'))[:100]!r}, "
            f"not {plugin.api_version!r} as the kubeconfig asks"
        )
    status = data.get("status")
    if not isinstance(status, dict):
        raise ExecPluginError(f"{name} printed an ExecCredential without a status")
    token = status.get("token")
    certificate = status.get("clientCertificateData")
    key = status.get("clientKeyData")
    if token is not None and (not isinstance(token, str) or not token.strip()):
        raise ExecPluginError(f"{name} printed a status.token that is not a non-empty string")
    has_certificate = isinstance(certificate, str) and certificate and isinstance(key, str) and key
    if token is None and not has_certificate:
        raise ExecPluginError(
            f"{name} printed neither status.token nor both status.clientCertificateData "
            "and status.clientKeyData"
        )
    return ExecCredential(
        token.strip() if isinstance(token, str) else None,
        certificate if token is None else None,
        key if token is None else None,
        _expiry(status.get("expirationTimestamp"), name),
    )


def _expiry(value: object, name: str) -> datetime.datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
            if parsed.tzinfo is not None:
                return parsed
    raise ExecPluginError(f"{name} printed a status.expirationTimestamp that is not RFC 3339")


class ExecAuth:
    """The credential of one kubeconfig user's exec plugin, run when first needed and again
    when it expires, installed into the official `Configuration` (token or client
    certificate files)."""

    def __init__(self, plugin: ExecPlugin, configuration: Any) -> None:
        self.plugin = plugin
        self._configuration = configuration
        self._credential: ExecCredential | None = None
        self._lock = threading.Lock()
        self._files: tuple[Path, Path] | None = None
        self._local = threading.local()
        # For code that uses `Credentials.configuration` with the official client directly:
        # its requests read the token through this hook (with the default limits).
        configuration.refresh_api_key_hook = self._hook

    def _hook(self, _configuration: Any) -> None:
        if not getattr(self._local, "handled", False):
            self.ensure(ReadLimits())

    @contextlib.contextmanager
    def handled(self) -> Iterator[None]:
        """While flarekit's transport reads the credential it has just ensured: the
        official client's refresh hook leaves it alone."""
        self._local.handled = True
        try:
            yield
        finally:
            self._local.handled = False

    def invalidate(self) -> None:
        """Forget the credential (the server answered 401): the next request runs the plugin."""
        with self._lock:
            self._credential = None

    def ensure(self, limits: ReadLimits) -> bool:
        """Make sure a fresh credential is installed; True when the client certificate files
        changed (connections opened before use the old certificate)."""
        with self._lock:
            if self._credential is not None and self._credential.fresh():
                return False
            credential = run_plugin(self.plugin, limits)
            self._credential = credential
            if credential.token is not None:
                self._configuration.api_key = {"authorization": f"Bearer {credential.token}"}
                self._configuration.api_key_prefix = {}
                return False
            assert credential.certificate is not None and credential.key is not None
            self._configuration.api_key = {}
            return self._write_certificate(credential.certificate, credential.key)

    def _write_certificate(self, certificate: str, key: str) -> bool:
        if self._files is None:
            folder = Path(tempfile.mkdtemp(prefix="flarekit-exec-"))
            self._files = (folder / "client.crt", folder / "client.key")
            import atexit
            import shutil

            atexit.register(shutil.rmtree, folder, True)
        cert_path, key_path = self._files
        changed = not cert_path.exists() or cert_path.read_text() != certificate
        for path, text in ((cert_path, certificate), (key_path, key)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(text)
        self._configuration.cert_file = str(cert_path)
        self._configuration.key_file = str(key_path)
        return changed
