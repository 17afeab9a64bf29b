"""Talking to an arena server from the command line (stdlib ``urllib`` only)."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
import uuid
from typing import Any

DEFAULT_SERVER = "http://127.0.0.1:8000"
API = "/api/v1"


class ServerError(Exception):
    """The server refused a request or could not be reached; the message says why.

    ``status`` is the HTTP status of the answer, or None when no answer came at all.
    """

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status

    @property
    def transient(self) -> bool:
        """True for a failure worth retrying: no answer, or a 5xx (the server's own trouble)."""
        return self.status is None or self.status >= 500


def server_url(given: str | None) -> str:
    """``--server``, else ``ARENA_SERVER``, else the local platform of ``arena up``."""
    return (given or os.environ.get("ARENA_SERVER") or DEFAULT_SERVER).rstrip("/")


def token_of(given: str | None) -> str | None:
    """``--token``, else ``ARENA_TOKEN``."""
    return given or os.environ.get("ARENA_TOKEN") or None


def request(
    server: str,
    path: str,
    *,
    token: str | None = None,
    body: bytes | None = None,
    content_type: str | None = None,
    timeout: float = 60.0,
) -> bytes:
    """One HTTP request to the API; the body of a 2xx answer, ``ServerError`` otherwise."""
    headers = {"Accept": "application/json", "User-Agent": "arena-cli"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if content_type:
        headers["Content-Type"] = content_type
    req = urllib.request.Request(server + API + path, data=body, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as answer:
            data: bytes = answer.read()
            return data
    except urllib.error.HTTPError as exc:
        raise ServerError(f"{exc.code}: {_error_message(exc.read())}", exc.code) from None
    except (urllib.error.URLError, OSError) as exc:
        raise ServerError(f"cannot reach {server}: {exc}") from None


def get_json(server: str, path: str, token: str | None = None) -> Any:
    return json.loads(request(server, path, token=token))


def _error_message(body: bytes) -> str:
    """The message of the API's error envelope (or the raw start of the body)."""
    try:
        error = json.loads(body)["error"]
        message = str(error.get("message", ""))
        details = error.get("details")
        return f"{message} {json.dumps(details)}" if details else message
    except (ValueError, KeyError, TypeError, AttributeError):
        return body[:300].decode(errors="replace")


def multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes]]) -> tuple[bytes, str]:
    """A ``multipart/form-data`` body and its content type."""
    boundary = uuid.uuid4().hex
    parts: list[bytes] = []
    for name, value in fields.items():
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
            + value.encode()
            + b"\r\n"
        )
    for name, (filename, data) in files.items():
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
            f'filename="{filename}"\r\nContent-Type: application/octet-stream\r\n\r\n'
        )
        parts.append(head.encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"
