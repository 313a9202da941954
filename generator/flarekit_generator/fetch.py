"""Fill the schema cache with exactly the CRD files the lock file pins.

``make schemas`` runs ``run_schemas_command``. Each pinned file ends up in the
git-ignored cache as ``<cache>/<family>/<tag>/<file name>``, taken, in order of
preference, from

1. the cache itself, if the file there still has the pinned sha256;
2. a mirror directory laid out the same way (``SCHEMA_MIRROR``; the Makefile
   points it at ``../shared/schemas``), so builds work offline;
3. a download of ``<base URL>/<repo>/<tag>/<path>`` (``FLAREKIT_SCHEMA_BASE_URL``,
   by default ``https://raw.githubusercontent.com``).

Whatever the source, the bytes are written to a temporary file inside the cache
directory, hashed while written, and renamed into place only if the sha256
matches the lock. A tampered, truncated or re-tagged upstream file therefore
never lands in the cache: it raises ``SchemaIntegrityError`` naming the file,
where it came from and both hashes.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from flarekit_generator import __version__, paths
from flarekit_generator.lockfile import LockEntry, LockFileError, read_lock

__all__ = [
    "BASE_URL_ENV",
    "DEFAULT_BASE_URL",
    "DOWNLOAD_TIMEOUT_SECONDS",
    "DOWNLOAD_WORKERS",
    "MIRROR_ENV",
    "FillReport",
    "SchemaCacheError",
    "SchemaFetchError",
    "SchemaIntegrityError",
    "cached_path",
    "download_base_url",
    "fill_cache",
    "run_schemas_command",
]

#: Environment variable naming the mirror directory (read by ``paths.mirror_dir``).
MIRROR_ENV = "SCHEMA_MIRROR"
#: Environment variable overriding where pinned files are downloaded from.
BASE_URL_ENV = "FLAREKIT_SCHEMA_BASE_URL"
DEFAULT_BASE_URL = "https://raw.githubusercontent.com"
#: Seconds without progress before one download is given up.
DOWNLOAD_TIMEOUT_SECONDS = 30.0
#: Downloads run a few at a time: enough to hide latency, few enough to be polite.
DOWNLOAD_WORKERS = 4

_CHUNK_BYTES = 1 << 16


class SchemaCacheError(Exception):
    """A pinned schema file could not be put into the cache."""


class SchemaFetchError(SchemaCacheError):
    """A pinned file could not be obtained at all (offline, HTTP error, not mirrored)."""


class SchemaIntegrityError(SchemaCacheError):
    """A file's content is not the pinned content; it was not written to the cache."""

    def __init__(self, entry: LockEntry, source: str, actual_sha256: str, actual_size: int):
        self.entry = entry
        self.source = source
        self.actual_sha256 = actual_sha256
        self.actual_size = actual_size
        super().__init__(
            f"sha256 mismatch for {entry.family} {entry.tag} {entry.path}\n"
            f"  source:   {source}\n"
            f"  expected: {entry.sha256} ({entry.size} bytes, pinned in the lock file)\n"
            f"  actual:   {actual_sha256} ({actual_size} bytes)\n"
            f"The file was refused and not written to the cache. Either the source is corrupt "
            f"or tampered with, or the release changed upstream and must be pinned anew in "
            f"schemas/crds.lock.tsv (see schemas/README.md)."
        )


@dataclass(frozen=True)
class FillReport:
    """How many pinned files came from where during one ``fill_cache`` run."""

    cached: int
    copied: int
    downloaded: int

    @property
    def total(self) -> int:
        return self.cached + self.copied + self.downloaded

    def summary(self) -> str:
        return (
            f"{self.total} schema files verified ({self.cached} cached, "
            f"{self.copied} from mirror, {self.downloaded} downloaded)"
        )


def cached_path(entry: LockEntry, cache_dir: Path) -> Path:
    """Where ``entry`` is kept in the cache: ``<cache_dir>/<family>/<tag>/<file name>``."""
    return cache_dir / entry.family / entry.tag / entry.file_name


def download_base_url() -> str:
    """The download base URL: ``$FLAREKIT_SCHEMA_BASE_URL`` or GitHub's raw file host."""
    value = os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL
    if not value.startswith(("http://", "https://")):
        raise SchemaFetchError(f"{BASE_URL_ENV} must be an http:// or https:// URL, got {value!r}")
    return value


def fill_cache(
    entries: Sequence[LockEntry],
    cache_dir: Path,
    *,
    mirror: Path | None,
    base_url: str = DEFAULT_BASE_URL,
    allow_download: bool = True,
    timeout: float = DOWNLOAD_TIMEOUT_SECONDS,
) -> FillReport:
    """Make ``cache_dir`` hold every file in ``entries`` with its pinned sha256.

    A cached file that no longer matches (edited, truncated, or pinned anew) is
    removed and fetched again. Raises ``SchemaIntegrityError`` on the first file
    whose content does not match, and ``SchemaFetchError`` when a file can be
    neither copied nor downloaded; files verified before the error stay cached.
    """
    if not base_url.startswith(("http://", "https://")):
        raise ValueError(f"base_url must be an http:// or https:// URL, got {base_url!r}")
    cached = copied = 0
    to_download: list[LockEntry] = []
    for entry in entries:
        target = cached_path(entry, cache_dir)
        if target.is_file():
            if _sha256_of(target) == entry.sha256:
                cached += 1
                continue
            target.unlink()
        source = _mirror_file(entry, mirror)
        if source is not None:
            with source.open("rb") as stream:
                _store(entry, stream, target, str(source))
            copied += 1
        else:
            to_download.append(entry)

    if to_download and not allow_download:
        raise SchemaFetchError(_not_available_offline(to_download, mirror))
    _download_all(to_download, cache_dir, base_url, timeout)
    return FillReport(cached=cached, copied=copied, downloaded=len(to_download))


def run_schemas_command(
    *,
    offline: bool = False,
    lock: Path | None = None,
    cache_dir: Path | None = None,
    mirror: Path | None = None,
) -> int:
    """``flarekit-generate schemas``: fill the cache (default: ``paths``) from the lock file.

    Prints a one-line summary and returns 0, or prints the error and returns 1.
    """
    try:
        report = fill_cache(
            read_lock(lock),
            cache_dir or paths.cache_dir(),
            mirror=mirror or paths.mirror_dir(),
            base_url=download_base_url(),
            allow_download=not offline,
        )
    except (LockFileError, SchemaCacheError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(report.summary())
    return 0


def _mirror_file(entry: LockEntry, mirror: Path | None) -> Path | None:
    if mirror is None:
        return None
    candidate = mirror / entry.family / entry.tag / entry.file_name
    return candidate if candidate.is_file() else None


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def _store(entry: LockEntry, stream: BinaryIO, target: Path, source: str) -> None:
    """Copy ``stream`` to ``target`` only if its sha256 is the pinned one.

    The temporary file lives in the target's directory so the final rename is
    atomic; on any failure it is removed, leaving nothing behind.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(
        dir=target.parent, prefix=f".{entry.file_name}.", suffix=".part"
    )
    temp = Path(temp_name)
    try:
        digest = hashlib.sha256()
        size = 0
        with os.fdopen(handle, "wb") as out:
            while chunk := stream.read(_CHUNK_BYTES):
                digest.update(chunk)
                size += len(chunk)
                out.write(chunk)
        actual = digest.hexdigest()
        if actual != entry.sha256:
            raise SchemaIntegrityError(entry, source, actual, size)
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _download_all(
    entries: Sequence[LockEntry], cache_dir: Path, base_url: str, timeout: float
) -> None:
    if not entries:
        return
    workers = min(DOWNLOAD_WORKERS, len(entries))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="schema-download") as pool:
        futures = [
            pool.submit(_download, entry, cached_path(entry, cache_dir), base_url, timeout)
            for entry in entries
        ]
        try:
            for future in as_completed(futures):
                future.result()
        except BaseException:
            for future in futures:
                future.cancel()
            raise


def _download(entry: LockEntry, target: Path, base_url: str, timeout: float) -> None:
    url = entry.url(base_url)
    request = urllib.request.Request(
        url, headers={"User-Agent": f"flarekit-generator/{__version__}"}
    )
    what = f"{entry.family} {entry.tag} {entry.path}"
    try:
        # A fresh opener per download reads the proxy settings of the moment and
        # shares no handler state between threads.
        with urllib.request.build_opener().open(request, timeout=timeout) as response:
            _store(entry, response, target, url)
    except urllib.error.HTTPError as error:
        error.close()
        raise SchemaFetchError(
            f"could not download {what} from {url}: HTTP {error.code} {error.reason}"
        ) from error
    except (OSError, http.client.HTTPException) as error:
        # URLError, timeouts, refused or reset connections, a response cut short.
        reason = error.reason if isinstance(error, urllib.error.URLError) else repr(error)
        raise SchemaFetchError(
            f"could not download {what} from {url}: {reason}. "
            f"If this machine is offline, point {MIRROR_ENV} at a directory laid out as "
            f"<family>/<tag>/<file name> holding the pinned files."
        ) from error


def _not_available_offline(missing: Sequence[LockEntry], mirror: Path | None) -> str:
    shown = "\n".join(f"  {e.family}/{e.tag}/{e.file_name}" for e in missing[:10])
    more = f"\n  ... and {len(missing) - 10} more" if len(missing) > 10 else ""
    where = f"the mirror {mirror}" if mirror is not None else f"a mirror (set {MIRROR_ENV})"
    return (
        f"{len(missing)} pinned schema file(s) neither cached nor in {where}, "
        f"and downloads are disabled (offline):\n{shown}{more}"
    )
