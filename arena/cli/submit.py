"""``arena submit``: pack a bot folder, upload it to a server, and follow its validation."""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

from arena.bots import ManifestError, load_bot
from arena.cli.remote import ServerError, get_json, multipart, request, server_url, token_of

SETTLED = frozenset({"active", "rejected", "retired"})


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "submit", help="upload a bot folder to an arena server and wait for its validation"
    )
    parser.add_argument("bot_dir", metavar="BOT_DIR", type=Path, help="folder with bot.toml")
    parser.add_argument("--server", help="server URL (ARENA_SERVER; default 127.0.0.1:8000)")
    parser.add_argument("--token", help="API token from your account page (ARENA_TOKEN)")
    parser.add_argument(
        "--wait", type=float, default=300.0, help="seconds to wait for validation (0: do not)"
    )
    parser.set_defaults(func=run)


def pack(folder: Path) -> bytes:
    """A zip of the bot folder: hidden files and caches left out, the same bytes every time."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(folder)
            if any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
                continue
            if path.is_file() and not path.is_symlink():
                info = zipfile.ZipInfo(rel.as_posix(), date_time=(2020, 1, 1, 0, 0, 0))
                mode = 0o100755 if os.access(path, os.X_OK) else 0o100644
                info.external_attr = mode << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, path.read_bytes())
    return buffer.getvalue()


def upload(server: str, token: str, name: str, data: bytes) -> dict[str, Any]:
    """Send the archive; the new version as the server describes it."""
    body, content_type = multipart({}, {"file": (f"{name}.zip", data)})
    answer = request(
        server, "/uploads", token=token, body=body, content_type=content_type, timeout=120
    )
    version: dict[str, Any] = json.loads(answer)["data"]
    return version


def wait_for(server: str, token: str, version_id: int, seconds: float) -> dict[str, Any]:
    """Poll the version until it is active or rejected (or ``seconds`` pass)."""
    deadline = time.monotonic() + seconds
    delay = 0.5
    while True:
        version: dict[str, Any] = get_json(server, f"/versions/{version_id}", token)["data"]
        if version["status"] in SETTLED or time.monotonic() >= deadline:
            return version
        time.sleep(delay)
        delay = min(delay * 1.5, 5.0)


def run(args: argparse.Namespace) -> int:
    token = token_of(args.token)
    if not token:
        print("arena submit: an API token is needed (--token or ARENA_TOKEN)", file=sys.stderr)
        return 2
    try:
        manifest = load_bot(args.bot_dir)
    except ManifestError as exc:
        print(f"arena submit: {exc}", file=sys.stderr)
        return 2
    server = server_url(args.server)
    try:
        version = upload(server, token, manifest.name, pack(args.bot_dir))
        print(f"uploaded {manifest.name} version {version['number']} (id {version['id']})")
        if args.wait > 0 and version["status"] not in SETTLED:
            version = wait_for(server, token, version["id"], args.wait)
    except ServerError as exc:
        print(f"arena submit: {exc}", file=sys.stderr)
        return 1
    return report(version)


def report(version: dict[str, Any]) -> int:
    """Print where the version stands; 0 if active or still on its way, 1 if rejected."""
    status = version["status"]
    print(f"status: {status}")
    if status == "rejected":
        print(f"reason: {version.get('error')}")
        for key in ("build_log", "validation_log"):
            if version.get(key):
                print(f"--- {key.replace('_', ' ')}\n{version[key].rstrip()}")
        return 1
    if status not in SETTLED:
        print("still being checked; see the bot's page on the site")
    return 0
