"""Lists that page through the server with `limit`/`continue`, behind a plain iterator.

Asking for thousands of objects in one response makes the apiserver (and the client) build it
all in memory; paging keeps each response small. All pages come from the same snapshot (the
continue token pins the first page's resourceVersion), so iterating sees a consistent list,
and `resource_version` is the version to start a watch from without missing anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Generic, TypeVar

from flarekit.client._codec import ResourceList
from flarekit_models import KubeResource

__all__ = ["ListIterator"]

R = TypeVar("R", bound=KubeResource)

if TYPE_CHECKING:
    # Only for type checkers: subscripting the pydantic generic at run time would build its
    # schema (and load pydantic's plugins) while the module is imported.
    #: Fetches one page given the continue token ("" for the first page).
    PageFetcher = Callable[[str], ResourceList[R]]


class ListIterator(Generic[R]):
    """Iterate over the objects of a list; the next page is fetched only when needed.

    Iterate once: each iteration pages through the server again. A continue token that
    outlives the server's history raises `Gone` (start over; the list cannot stay consistent).
    """

    def __init__(self, fetch: PageFetcher[R]) -> None:
        self._fetch = fetch
        self._pending: ResourceList[R] | None = None
        self._resource_version: str | None = None
        self.pages = 0

    def _page(self, token: str) -> ResourceList[R]:
        page = self._fetch(token)
        self.pages += 1
        return page

    def _first_page(self) -> ResourceList[R]:
        page = self._page("")
        self._resource_version = page.metadata.resource_version
        return page

    @property
    def resource_version(self) -> str:
        """The resourceVersion of the latest snapshot (fetches the first page if none yet)."""
        if self._resource_version is None:
            self._pending = self._first_page()
        assert self._resource_version is not None
        return self._resource_version

    def __iter__(self) -> Iterator[R]:
        # A page fetched for `resource_version` is used once; later iterations list afresh.
        page, self._pending = self._pending or self._first_page(), None
        while True:
            yield from page.items or ()
            token = page.metadata.continue_
            if not token:
                return
            page = self._page(token)
