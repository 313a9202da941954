"""Local ``working_dir`` and ``py_modules`` of a Ray job, zipped and uploaded to the cluster.

Ray's SDK ships local code by zipping it and storing the zip in the cluster's GCS through the
dashboard's package endpoint (``PUT /api/packages/gcs/<name>``), then naming it in the
runtime environment as ``gcs://<name>``; the workers fetch and unpack it. This module does the
same over plain HTTP, so no Ray is needed on the client:

- the package name is ``_ray_pkg_<sha1>.zip``, the hash taken over each file's relative path
  and content (not over the zip, whose bytes vary with timestamps), so unchanged code is
  uploaded once: ``GET /api/packages/gcs/<name>`` says whether the cluster already has it;
- a ``working_dir`` is zipped with its contents at the top (it becomes the job's current
  directory); a ``py_modules`` entry (a package directory or a single ``.py`` file) is zipped
  with the entry itself at the top, so that it imports by its name;
- ``runtime_env["excludes"]`` (gitignore-style patterns: ``"data/"``, ``"*.ckpt"``,
  ``"/build"``) and always ``.git``, ``__pycache__`` and ``*.pyc`` are left out;
- a package above `MAX_PACKAGE_BYTES` (zipped) is refused naming the path, its size and the
  limit, before anything is uploaded: every local entry is zipped and checked first.
"""

from __future__ import annotations

import fnmatch
import hashlib
import io
import os
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from flarekit.ray._jobs_errors import RayJobValidationError

__all__ = [
    "MAX_PACKAGE_BYTES",
    "CodeEntries",
    "Package",
    "check_local",
    "is_local",
    "local_packages",
    "package",
]

#: The largest zipped package uploaded (Ray's GCS refuses more than 512 MiB).
MAX_PACKAGE_BYTES = 100 * 1024 * 1024
ALWAYS_EXCLUDED = (".git", "__pycache__", "*.pyc")
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class Package:
    """One zipped local entry: its ``gcs://`` URI, the zip, and where it came from."""

    uri: str
    name: str
    data: bytes
    source: Path


def is_local(value: object) -> bool:
    """A runtime_env path to upload (no ``scheme://``)."""
    return isinstance(value, str | os.PathLike) and "://" not in str(value)


def check_local(value: object, field: str, *, module: bool) -> Path:
    """The existing local directory (or, for a module, ``.py`` file) `value` names."""
    path = Path(str(value)).expanduser()
    if path.is_dir() or (module and path.is_file() and path.suffix == ".py"):
        return path
    what = "a local directory or .py file" if module else "a local directory"
    raise RayJobValidationError(
        field,
        f"{str(value)!r} is neither a remote URI (https://, s3://, gs://, gcs://...) nor "
        f"{what} that exists",
    )


def package(
    path: Path,
    *,
    field: str,
    excludes: Sequence[str] = (),
    include_top: bool = False,
    limit: int = MAX_PACKAGE_BYTES,
) -> Package:
    """Zip `path` (see the module notes); `RayJobValidationError` naming `field` when the zip
    is larger than `limit` bytes."""
    excluded = _matcher([*ALWAYS_EXCLUDED, *excludes])
    base = path.parent if include_top else path
    digest = hashlib.sha1(usedforsecurity=False)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in _files(path, excluded, path):
            relative = file.relative_to(base).as_posix()
            content = file.read_bytes()
            digest.update(relative.encode() + b"\0" + content + b"\0")
            info = zipfile.ZipInfo(relative, date_time=_FIXED_TIME)
            info.external_attr = (file.stat().st_mode & 0o777) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, content)
    data = buffer.getvalue()
    if len(data) > limit:
        raise RayJobValidationError(
            field,
            f"{str(path)!r} is {_mib(len(data))} zipped, more than the {_mib(limit)} a job may "
            "upload; leave large files out with runtime_env['excludes'] (e.g. ['data/', "
            "'*.ckpt']) and read data from storage the cluster can reach",
        )
    name = f"_ray_pkg_{digest.hexdigest()}.zip"
    return Package(uri=f"gcs://{name}", name=name, data=data, source=path)


def _files(path: Path, excluded: Callable[[str, bool], bool], root: Path) -> Iterator[Path]:
    """Every file under `path` (or `path` itself), sorted, without the excluded ones."""
    if path.is_file():
        yield path
        return
    for current, dirs, files in os.walk(path):
        here = Path(current)
        relative_dir = here.relative_to(root).as_posix()
        prefix = "" if relative_dir == "." else relative_dir + "/"
        dirs[:] = sorted(d for d in dirs if not excluded(prefix + d, True))
        for name in sorted(files):
            if not excluded(prefix + name, False):
                yield here / name


def _matcher(patterns: Sequence[str]) -> Callable[[str, bool], bool]:
    """gitignore-style matching of a path relative to the uploaded directory: ``dir/`` only
    matches directories, a leading ``/`` anchors at the top, a pattern without ``/`` matches
    a name at any depth."""
    rules = []
    for pattern in patterns:
        only_dirs = pattern.endswith("/")
        body = pattern.strip("/")
        anchored = pattern.startswith("/") or "/" in body
        if body:
            rules.append((body, only_dirs, anchored))

    def excluded(relative: str, is_dir: bool) -> bool:
        name = relative.rsplit("/", 1)[-1]
        for body, only_dirs, anchored in rules:
            if only_dirs and not is_dir:
                continue
            if fnmatch.fnmatchcase(relative if anchored else name, body):
                return True
        return False

    return excluded


def _mib(size: int) -> str:
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"


class CodeEntries(BaseModel):
    """The entries of a Ray runtime environment that name code to ship: ``working_dir``,
    ``py_modules`` and the ``excludes`` patterns. Ray's other keys (and plugins' keys) are
    not read here. Values are kept as given (the same objects): local paths, URIs, or the
    `Package` that replaced a local path; their checks are the callers'."""

    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)

    working_dir: object = None
    py_modules: object = None
    excludes: object = None


def local_packages(
    runtime_env: dict[str, object], limit: int = MAX_PACKAGE_BYTES
) -> dict[str, object]:
    """`runtime_env` with every local ``working_dir`` / ``py_modules`` entry replaced by
    the `Package` to upload for it (checked and zipped, nothing sent)."""
    code = CodeEntries.model_validate(runtime_env)
    raw_excludes = code.excludes
    excludes = [str(e) for e in raw_excludes] if isinstance(raw_excludes, list) else []
    out = dict(runtime_env)
    if is_local(code.working_dir):
        field = "runtime_env['working_dir']"
        path = check_local(code.working_dir, field, module=False)
        out["working_dir"] = package(path, field=field, excludes=excludes, limit=limit)
    modules = code.py_modules
    if isinstance(modules, list):
        entries: list[object] = []
        for index, entry in enumerate(modules):
            field = f"runtime_env['py_modules'][{index}]"
            if is_local(entry):
                path = check_local(entry, field, module=True)
                entry = package(path, field=field, excludes=excludes, include_top=True, limit=limit)
            entries.append(entry)
        out["py_modules"] = entries
    return out
