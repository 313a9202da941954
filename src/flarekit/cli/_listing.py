"""``list`` commands the kubectl way: ``-A``, ``-l``, ``-o wide|name|yaml|json`` and ``-w``.

Why here: ``cluster list`` and ``job list`` show rows made from more than one kind (a
RayCluster and the AppWrapper holding it; RayJobs and TrainJobs), so a watch cannot just
print the events of one kind. Instead every kind involved is watched through the `Client`,
each event makes the command read its listing again, and only rows that changed are printed:
the output is what ``kubectl get -w`` prints, rows as they change, and it never shows a
state the listing itself would not show.
"""

from __future__ import annotations

import argparse
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

import flarekit
from flarekit._tables import text_table
from flarekit.cli._common import seconds
from flarekit.cli._output import Format, dump, emit_objects, object_name

if TYPE_CHECKING:
    from flarekit import Client
    from flarekit_models import KubeResource

__all__ = ["Listed", "Listing", "add_listing_flags", "show", "watch"]


def add_listing_flags(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("-A", "--all-namespaces", action="store_true", help=f"{what} in every namespace")
    p.add_argument(
        "-l",
        "--selector",
        metavar="SELECTOR",
        help="only those whose labels match (e.g. team=a,tier!=dev)",
    )
    p.add_argument(
        "-w", "--watch", action="store_true", help="after the listing, print rows as they change"
    )
    p.add_argument(
        "--timeout",
        type=seconds,
        help="with --watch: stop after this many seconds (default: until interrupted)",
    )


@dataclass(frozen=True)
class Listed:
    """One row of a listing: its key (namespace, name, kind), its cells and its object."""

    key: tuple[str, str, str]
    row: tuple[object, ...]
    wide: tuple[object, ...]
    resource: KubeResource


@dataclass(frozen=True)
class Listing:
    """How a command lists: its column headers, its title, and how to read the rows."""

    header: tuple[str, ...]
    wide_header: tuple[str, ...]
    title: Callable[[int], str]
    read: Callable[[], list[Listed]]
    kinds: Sequence[type[KubeResource]]


def _table(listing: Listing, rows: Sequence[Listed], fmt: Format, *, title: bool) -> str:
    wide = fmt == "wide"
    header = listing.wide_header if wide else listing.header
    cells = [r.wide if wide else r.row for r in rows]
    heading = listing.title(len(rows)) if title else None
    if not cells:
        return heading or ""
    return text_table(cells, header=header, title=heading)


def show(listing: Listing, fmt: Format, out: TextIO) -> list[Listed]:
    """Print the listing once; returns its rows."""
    rows = listing.read()
    table = _table(listing, rows, "table", title=True)
    wide = _table(listing, rows, "wide", title=True)
    emit_objects([r.resource for r in rows], fmt, out, table=table, wide=wide)
    return rows


def _print_changes(listing: Listing, rows: Sequence[Listed], fmt: Format, out: TextIO) -> None:
    if fmt in ("table", "wide"):
        header = listing.wide_header if fmt == "wide" else listing.header
        cells = [r.wide if fmt == "wide" else r.row for r in rows]
        # Aligned as the header would be, without printing it again (kubectl's -w output).
        lines = text_table(cells, header=header).splitlines()[2:]
        out.write("".join(line + "\n" for line in lines))
    elif fmt == "name":
        out.write("".join(object_name(r.resource) + "\n" for r in rows))
    else:
        for r in rows:
            out.write(("---\n" if fmt == "yaml" else "") + dump(r.resource.to_dict(), fmt))
    out.flush()


def _watch_kind(
    client: Client,
    kind: type[KubeResource],
    namespace: str,
    timeout: float | None,
    events: queue.Queue[BaseException | None],
) -> None:
    try:
        for _ in client.watch(kind, namespace=namespace, timeout=timeout):
            events.put(None)
    except flarekit.NotFound:
        return  # the kind is not served here: nothing of it can change
    except BaseException as exc:  # the main thread reports it
        events.put(exc)


def watch(
    listing: Listing,
    client: Client,
    namespace: str,
    fmt: Format,
    out: TextIO,
    *,
    timeout: float | None,
) -> None:
    """Print the listing, then every row that changes (a removed row once more, as it was
    last seen), until `timeout` seconds have passed (None: until interrupted)."""
    seen = {r.key: r for r in show(listing, fmt, out)}
    events: queue.Queue[BaseException | None] = queue.Queue()
    for kind in listing.kinds:
        threading.Thread(
            target=_watch_kind,
            args=(client, kind, namespace, timeout, events),
            name=f"flarekit-watch-{kind.__name__}",
            daemon=True,
        ).start()
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return
        try:
            event = events.get(timeout=left)
        except queue.Empty:
            return
        if event is not None:
            raise event
        while not events.empty():  # one read for a burst of events
            if (extra := events.get_nowait()) is not None:
                raise extra
        now = {r.key: r for r in listing.read()}
        text = fmt in ("table", "wide")
        changed = [r for key, r in now.items() if _differs(seen.get(key), r, text)]
        gone = [r for key, r in seen.items() if key not in now] if text else []
        if changed or gone:
            _print_changes(listing, changed + gone, fmt, out)
        seen = now


def _differs(before: Listed | None, after: Listed, text: bool) -> bool:
    """Whether a row is worth printing again: its cells changed (tables), or its object did."""
    if before is None:
        return True
    return before.wide != after.wide if text else before.resource != after.resource
