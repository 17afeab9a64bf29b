"""The interpreters and compilers the server's sandbox offers uploaded bots, probed once.

Probing starts programs in the sandbox and is slow, so the answer is kept in this process: a
list for good, a failure for ``RETRY_AFTER_S`` (then it is asked again). A failure never
raises: the upload page and the API say the runtimes could not be listed, and why.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

log = logging.getLogger(__name__)

RETRY_AFTER_S = 300.0
"""How long a failed probe is remembered before the next page asks again."""

_lock = threading.Lock()
_cache: dict[str, tuple[float, dict[str, Any]]] = {}


def offered(backend: str) -> dict[str, Any]:
    """``{"backend", "available", "reason", "languages", "runtimes"}`` for ``backend`` (see
    ``sandbox.runtimes.runtimes_json``); ``available`` is false, with the reason, when the
    backend cannot run here or the probe failed."""
    with _lock:
        kept = _cache.get(backend)
        if kept is not None and (kept[1]["available"] or time.monotonic() < kept[0]):
            return kept[1]
        answer = {"backend": backend, **_probe(backend)}
        _cache[backend] = (time.monotonic() + RETRY_AFTER_S, answer)
        return answer


def forget() -> None:
    """Drop what is kept (the next call probes again)."""
    with _lock:
        _cache.clear()


def _probe(backend: str) -> dict[str, Any]:
    from sandbox.runtimes import runtimes_json, unavailable_json

    try:
        answer: dict[str, Any] = runtimes_json((backend,))[backend]
    except Exception as exc:  # a probe that breaks must not break the page asking for it
        log.warning("the runtimes of sandbox %r could not be listed: %s", backend, exc)
        reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return unavailable_json(reason)
    return answer
