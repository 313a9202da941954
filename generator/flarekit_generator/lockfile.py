"""The pinned-schema lock file: which upstream CRD files the generator reads.

Generated models are only reproducible if every input byte is pinned. The lock
file (``schemas/crds.lock.tsv``) names each upstream CRD file by family, GitHub
repository, release tag, the commit that tag pointed at, path inside the
repository, sha256 and size. ``fetch`` uses it to fill the schema cache and to
refuse any file that is not byte-for-byte the pinned one.

The format is tab-separated with a header line, so that a release bump is a
readable one-line-per-file diff.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from flarekit_generator import paths

__all__ = ["LOCK_COLUMNS", "LockEntry", "LockFileError", "read_lock"]

#: The header line of the lock file, in order.
LOCK_COLUMNS: tuple[str, ...] = ("family", "repo", "tag", "commit", "path", "sha256", "bytes")

_SHA256 = re.compile(r"[0-9a-f]{64}")
_COMMIT = re.compile(r"[0-9a-f]{40}")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9._-]+")
_SIZE = re.compile(r"[0-9]+")


class LockFileError(ValueError):
    """The lock file is malformed; the message names the file, line and column."""


@dataclass(frozen=True)
class LockEntry:
    """One pinned upstream CRD file.

    ``family`` and ``tag`` also name the directories the file is kept under in
    the cache and in a mirror (``<family>/<tag>/<file name>``), so several
    releases of one family can be generated from side by side.
    """

    family: str
    repo: str
    tag: str
    commit: str
    path: str
    sha256: str
    size: int

    @property
    def file_name(self) -> str:
        """The base name of ``path``: how the file is named in the cache and a mirror."""
        return PurePosixPath(self.path).name

    def url(self, base_url: str) -> str:
        """Where the file is downloaded from: ``<base_url>/<repo>/<tag>/<path>``.

        ``base_url`` is ``https://raw.githubusercontent.com`` in production and a
        local server in tests.
        """
        return f"{base_url.rstrip('/')}/{self.repo}/{quote(self.tag)}/{quote(self.path)}"


def read_lock(path: Path | None = None) -> list[LockEntry]:
    """Read and validate the lock file (by default ``paths.lock_file()``).

    Every problem is reported as a ``LockFileError`` naming the file, the line
    number and the column, with the value found and what is allowed, so a
    hand-edited bump fails before anything is fetched.
    """
    lock_path = path if path is not None else paths.lock_file()
    try:
        text = lock_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LockFileError(f"{lock_path}: lock file not found") from None

    lines = text.splitlines()
    if not lines or tuple(lines[0].split("\t")) != LOCK_COLUMNS:
        found = lines[0] if lines else "<empty file>"
        raise LockFileError(
            f"{lock_path} line 1: header must be the tab-separated columns "
            f"{' '.join(LOCK_COLUMNS)!r}, got {found!r}"
        )

    entries: list[LockEntry] = []
    seen: dict[tuple[str, str, str], int] = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        entry = _parse_line(line, f"{lock_path} line {number}")
        key = (entry.family, entry.tag, entry.file_name)
        if key in seen:
            raise LockFileError(
                f"{lock_path} line {number}: {entry.family}/{entry.tag}/{entry.file_name} "
                f"is already pinned on line {seen[key]}; each family/tag/file name must be unique"
            )
        seen[key] = number
        entries.append(entry)

    if not entries:
        raise LockFileError(f"{lock_path}: no files are pinned (only a header line)")
    return entries


def _parse_line(line: str, where: str) -> LockEntry:
    """Turn one data line into a ``LockEntry``, checking every column."""
    fields = line.split("\t")
    if len(fields) != len(LOCK_COLUMNS):
        raise LockFileError(
            f"{where}: expected {len(LOCK_COLUMNS)} tab-separated columns "
            f"({', '.join(LOCK_COLUMNS)}), got {len(fields)}"
        )
    family, repo, tag, commit, path, sha256, size = fields

    _check(where, "family", family, _NAME, "a name of letters, digits, '.', '_' or '-'")
    _check(where, "repo", repo, _REPO, "'<owner>/<name>' as on GitHub")
    _check(where, "tag", tag, _NAME, "a tag of letters, digits, '.', '_' or '-'")
    _check(where, "commit", commit, _COMMIT, "40 lowercase hex digits")
    _check(where, "sha256", sha256, _SHA256, "64 lowercase hex digits")
    pure = PurePosixPath(path)
    if not path or pure.is_absolute() or ".." in pure.parts or "\\" in path or path.endswith("/"):
        raise LockFileError(
            f"{where}: column 'path' must be a relative file path inside the repository "
            f"without '..', got {path!r}"
        )
    if not _SIZE.fullmatch(size):
        raise LockFileError(
            f"{where}: column 'bytes' must be a non-negative whole number, got {size!r}"
        )
    return LockEntry(family, repo, tag, commit, path, sha256, int(size))


def _check(where: str, column: str, value: str, pattern: re.Pattern[str], allowed: str) -> None:
    if not pattern.fullmatch(value):
        raise LockFileError(f"{where}: column {column!r} must be {allowed}, got {value!r}")
