"""A few seconds of caching for pages that every anonymous visitor sees alike.

A busy ladder page is read far more often than it changes (only when a match finishes), so
anonymous visitors (no cookie, no token) share one rendering for ``PAGE_CACHE_SECONDS``. Logged-in
users always get a fresh page. The cache is per process and holds at most ``MAX_ENTRIES`` pages.

When a page expires, one request renders it again while the others still get the old copy (for
at most another ``PAGE_CACHE_SECONDS``): a busy page is never rendered by many threads at once.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from flask import Response, current_app, make_response, request

F = TypeVar("F", bound=Callable[..., Any])

MAX_ENTRIES = 256

_pages: OrderedDict[str, tuple[float, bytes, str]] = OrderedDict()
_refreshing: dict[str, threading.Event] = {}
_lock = threading.Lock()


def _cacheable() -> bool:
    return (
        request.method == "GET"
        and not request.cookies
        and "Authorization" not in request.headers
        and float(current_app.config.get("PAGE_CACHE_SECONDS", 0)) > 0
    )


def _lookup(key: str) -> tuple[bytes, str] | None:
    """A cached page, or None when this request should render it (and will ``_keep`` it).

    With no copy at all yet, requests wait for the one rendering the page (a few seconds at most)
    rather than all render it at once.
    """
    ttl = float(current_app.config["PAGE_CACHE_SECONDS"])
    for _attempt in range(2):
        now = time.monotonic()
        with _lock:
            entry = _pages.get(key)
            if entry is not None and now < entry[0]:
                return entry[1], entry[2]
            rendering = _refreshing.get(key)
            if rendering is None:
                _refreshing[key] = threading.Event()
                return None
            if entry is not None and now < entry[0] + ttl:
                return entry[1], entry[2]
        rendering.wait(5.0)
    with _lock:
        _refreshing.setdefault(key, threading.Event())
    return None


def _keep(key: str, response: Response) -> None:
    ttl = float(current_app.config["PAGE_CACHE_SECONDS"])
    with _lock:
        _pages[key] = (time.monotonic() + ttl, response.get_data(), response.content_type)
        _pages.move_to_end(key)
        while len(_pages) > MAX_ENTRIES:
            _pages.popitem(last=False)


def anonymous_cache(view: F) -> F:
    """Serve anonymous GETs of ``view`` from the short-lived cache."""

    @wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not _cacheable():
            return view(*args, **kwargs)
        key = request.full_path
        hit = _lookup(key)
        if hit is not None:
            return Response(hit[0], content_type=hit[1])
        try:
            response = make_response(view(*args, **kwargs))
            if response.status_code == 200 and "Set-Cookie" not in response.headers:
                _keep(key, response)
        finally:
            with _lock:
                done = _refreshing.pop(key, None)
            if done is not None:
                done.set()
        return response

    return wrapped  # type: ignore[return-value]


def clear() -> None:
    """Forget every cached page (tests)."""
    with _lock:
        _pages.clear()
        _refreshing.clear()
