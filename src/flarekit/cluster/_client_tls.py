"""Client certificates for `ray.init("ray://...")` on Ray clusters that require mutual TLS.

Why: where the platform turns on mTLS for Ray, the head accepts only clients whose
certificate the cluster's own CA signed (see `flarekit.cluster._cluster_ca`). codeflare-sdk
users call ``generate_cert.generate_tls_cert(name, namespace)`` then
``generate_cert.export_env(name, namespace)``; :func:`generate_tls_cert` and
:meth:`RayClientTLS.export_env` do the same here:

* the CA Secret is found and read through the `Client`; a missing Secret, key or unreadable
  PEM is an error naming the Secret and the key, before anything is written;
* a fresh key (ECDSA P-256) and a certificate signed by the cluster's CA are written with the
  CA certificate into a folder of their own (files 0600, folder 0700); the folder appears
  whole or not at all, and a failure leaves the previous files as they were;
* existing files are reused while they were made from the CA the Secret holds now and are
  not about to expire; a rotated CA gets new ones without being asked.

`cryptography` is the ``tls`` extra (``pip install 'flarekit[tls]'``).
"""

from __future__ import annotations

import contextlib
import datetime
import os
from collections.abc import MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import flarekit.client
from flarekit._validation import ValidationReport, check_dns1123_label, check_dns1123_subdomain
from flarekit.cluster._cluster_ca import (
    CASecretInvalid,
    CASecretNotFound,
    find_ca_secret,
    make_client_certificate,
    read_ca,
)
from flarekit.cluster._status import head_service_name
from flarekit_models.ray import v1 as ray_v1

if TYPE_CHECKING:
    from flarekit.client import Client
    from flarekit.cluster._cluster_ca import ClusterCA

__all__ = [
    "CASecretInvalid",
    "CASecretNotFound",
    "RayClientTLS",
    "export_env",
    "generate_tls_cert",
    "remove_tls_cert",
    "tls_base_dir",
]

#: Where certificates are kept, when set; else under the XDG data folder.
TLS_DIR_VARIABLE = "FLAREKIT_TLS_DIR"
XDG_DATA_HOME = "XDG_DATA_HOME"
#: Files older than this before their end are made anew.
RENEW_BEFORE = datetime.timedelta(days=1)


@dataclass(frozen=True)
class RayClientTLS:
    """The files a Ray client needs for mTLS with one cluster, in `directory`."""

    directory: Path

    @property
    def ca_cert(self) -> Path:
        """The cluster's CA certificate (to check the head's certificate)."""
        return self.directory / "ca.crt"

    @property
    def cert(self) -> Path:
        """The client certificate, signed by the cluster's CA."""
        return self.directory / "tls.crt"

    @property
    def key(self) -> Path:
        """The client certificate's private key."""
        return self.directory / "tls.key"

    def exists(self) -> bool:
        return all(path.is_file() for path in (self.ca_cert, self.cert, self.key))

    def environment(self) -> dict[str, str]:
        """The variables Ray reads to speak TLS: ``RAY_USE_TLS`` and the three files."""
        return {
            "RAY_USE_TLS": "1",
            "RAY_TLS_SERVER_CERT": str(self.cert),
            "RAY_TLS_SERVER_KEY": str(self.key),
            "RAY_TLS_CA_CERT": str(self.ca_cert),
        }

    def export_env(self, environ: MutableMapping[str, str] | None = None) -> None:
        """Set :meth:`environment` in `environ` (this process's environment by default), as
        codeflare-sdk's ``export_env`` does; `FileNotFoundError` if the files are missing."""
        if not self.exists():
            raise FileNotFoundError(
                f"no Ray client certificate in {self.directory}: call generate_tls_cert() first"
            )
        (os.environ if environ is None else environ).update(self.environment())


def tls_base_dir() -> Path:
    """Where client certificates are kept: ``$FLAREKIT_TLS_DIR``, else
    ``$XDG_DATA_HOME/flarekit/tls``, else ``~/.local/share/flarekit/tls``."""
    explicit = os.environ.get(TLS_DIR_VARIABLE)
    if explicit:
        return Path(explicit)
    data_home = os.environ.get(XDG_DATA_HOME)
    base = Path(data_home) if data_home else Path.home() / ".local" / "share"
    return base / "flarekit" / "tls"


def _check(cluster: str, namespace: str | None, days: int | None = None) -> None:
    """Every problem of the arguments at once (`ConfigError`), before anything is sent."""
    report = ValidationReport("the Ray client certificate")
    check_dns1123_subdomain(report, "cluster_name", cluster)
    if namespace is not None:
        check_dns1123_label(report, "namespace", namespace)
    if days is not None and (isinstance(days, bool) or not isinstance(days, int) or days < 1):
        report.add("days", days, "not a whole number of days", "an int of at least 1")
    report.raise_if_problems()


def _namespace(namespace: str | None, client: flarekit.client.Client | None) -> str:
    if namespace is not None:
        return namespace
    if client is None:
        client = flarekit.client.Client()
    return client.namespace or "default"


def _files(cluster: str, namespace: str, base_dir: Path | str | None) -> RayClientTLS:
    base = Path(base_dir) if base_dir is not None else tls_base_dir()
    return RayClientTLS(base / namespace / cluster)


def export_env(
    cluster_name: str,
    namespace: str | None = None,
    *,
    base_dir: Path | str | None = None,
    environ: MutableMapping[str, str] | None = None,
    client: Client | None = None,
) -> RayClientTLS:
    """Point Ray at the client certificate :func:`generate_tls_cert` wrote for the cluster
    (codeflare-sdk's ``export_env``); `FileNotFoundError` if there is none. Sends nothing
    (the client is only asked for its namespace when `namespace` is None)."""
    _check(cluster_name, namespace)
    namespace = _namespace(namespace, client)
    files = _files(cluster_name, namespace, base_dir)
    files.export_env(environ)
    return files


def remove_tls_cert(
    cluster_name: str,
    namespace: str | None = None,
    *,
    base_dir: Path | str | None = None,
    client: Client | None = None,
) -> bool:
    """Delete the cluster's client certificate folder (e.g. after `down()`); False when
    there was none."""
    _check(cluster_name, namespace)
    namespace = _namespace(namespace, client)
    files = _files(cluster_name, namespace, base_dir)
    if not files.directory.exists():
        return False
    import shutil

    shutil.rmtree(files.directory)
    return True


def _still_good(files: RayClientTLS, ca: ClusterCA) -> bool:
    """Whether the files on disk were made from this CA and are valid for a while yet."""
    from cryptography import x509

    if not files.exists():
        return False
    try:
        if files.ca_cert.read_bytes() != ca.pem:
            return False
        current = x509.load_pem_x509_certificate(files.cert.read_bytes())
    except (OSError, ValueError):
        return False
    now = datetime.datetime.now(datetime.UTC)
    return current.issuer == ca.certificate.subject and (
        current.not_valid_after_utc - now > RENEW_BEFORE
    )


# -- writing, all or nothing --------------------------------------------------------------------


def _write_private(path: Path, content: bytes) -> None:
    """Write a new file readable by its owner only (0600 whatever the umask)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(content)
        handle.flush()
        os.fsync(handle.fileno())


def _make_parents(directory: Path) -> list[Path]:
    """Create the missing folders above `directory` (0700); returns them, outermost first."""
    missing = [p for p in reversed(directory.parents) if not p.exists()]
    for folder in missing:
        folder.mkdir(mode=0o700)
    return missing


def write_files(files: RayClientTLS, contents: dict[str, bytes]) -> None:
    """Put the files in `files.directory` at once: written into a new folder beside it, then
    swapped in. On any failure the new folder, and folders made for it, are removed, and an
    existing folder is left (or put back) as it was."""
    import shutil
    import tempfile

    target = files.directory
    made = _make_parents(target)
    staging: Path | None = None
    previous: Path | None = None
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.new-", dir=target.parent))
        for name, content in contents.items():
            _write_private(staging / name, content)
        if target.exists():
            previous = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
            os.rename(target, previous / target.name)
        os.rename(staging, target)
        staging = None
    except BaseException:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        if previous is not None and (previous / target.name).exists() and not target.exists():
            os.rename(previous / target.name, target)
        if previous is not None:
            shutil.rmtree(previous, ignore_errors=True)
        for folder in reversed(made):
            _remove_if_empty(folder)
        raise
    if previous is not None:
        shutil.rmtree(previous, ignore_errors=True)


def _remove_if_empty(folder: Path) -> None:
    with contextlib.suppress(OSError):
        folder.rmdir()


def generate_tls_cert(
    cluster_name: str,
    namespace: str | None = None,
    *,
    days: int = 30,
    force_regenerate: bool = False,
    base_dir: Path | str | None = None,
    service: str | None = None,
    client: flarekit.client.Client | None = None,
) -> RayClientTLS:
    """Write a client certificate for Ray cluster `cluster_name`, signed by the CA in its CA
    Secret, with the CA certificate, into ``<base_dir>/<namespace>/<cluster_name>``
    (`base_dir` defaults to :func:`tls_base_dir`); returns where. Then
    ``.export_env()`` and ``ray.init("ray://...")``.

    Files made from the Secret's current CA and valid for more than a day are kept unless
    `force_regenerate`. `days` is the certificate's validity (never past the CA's); `service`
    names the head Service for the certificate's DNS names (None: as the RayCluster reports
    it, else KubeRay's ``<cluster>-head-svc``). `namespace=None` means the client's
    namespace.

    Raises `ConfigError` for a bad argument (nothing sent), :class:`CASecretNotFound`,
    :class:`CASecretInvalid` naming the Secret and key (nothing written), and `ImportError`
    without the ``tls`` extra.
    """
    _check(cluster_name, namespace, days)
    _require_cryptography()
    if client is None:
        client = flarekit.client.Client()
    namespace = _namespace(namespace, client)
    files = _files(cluster_name, namespace, base_dir)
    ca = read_ca(find_ca_secret(client, namespace, cluster_name))
    if not force_regenerate and _still_good(files, ca):
        return files
    if service is None:
        service = _head_service(client, namespace, cluster_name)
    cert_pem, key_pem = make_client_certificate(ca, cluster_name, namespace, days, service)
    write_files(files, {"ca.crt": ca.pem, "tls.crt": cert_pem, "tls.key": key_pem})
    return files


def _head_service(client: Client, namespace: str, cluster: str) -> str:
    """The head Service's name as KubeRay reports it, else KubeRay's naming."""
    try:
        raycluster = client.get(ray_v1.RayCluster, cluster, namespace=namespace)
    except flarekit.client.NotFound:
        raycluster = None
    return head_service_name(raycluster, cluster)


def _require_cryptography() -> None:
    try:
        import cryptography  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            "Ray client certificates need the 'cryptography' package: "
            "pip install 'flarekit[tls]'"
        ) from exc
