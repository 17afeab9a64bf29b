"""The API's single-file upload takes its manifest as a text field or as a file part."""

from __future__ import annotations

import io

from flask.testing import FlaskClient

from tests.web.site.conftest import World

MANIFEST = (
    'name = "{name}"\ngames = ["svoi-kozyri"]\nlanguage = "python"\nrun = ["python3", "bot.py"]\n'
)


def auth(world: World, who: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {world.tokens[who]}"}


def source() -> tuple[io.BytesIO, str]:
    return io.BytesIO(b"print('hi')\n"), "bot.py"


def post(client: FlaskClient, world: World, data: dict[str, object]) -> tuple[int, dict]:
    answer = client.post("/api/v1/uploads", data=data, headers=auth(world, "mallory"))
    return answer.status_code, answer.get_json()


def test_a_manifest_file_part_is_accepted(client: FlaskClient, world: World) -> None:
    toml = MANIFEST.format(name="file-part-bot").encode()
    code, body = post(client, world, {"file": source(), "manifest": (io.BytesIO(toml), "bot.toml")})
    assert code == 201, body
    assert body["data"]["number"] == 1 and body["data"]["status"] == "uploaded"
    bots = client.get("/api/v1/bots?user=mallory").get_json()["data"]
    assert "file-part-bot" in {b["name"] for b in bots}


def test_a_manifest_text_field_still_works(client: FlaskClient, world: World) -> None:
    code, body = post(
        client, world, {"file": source(), "manifest": MANIFEST.format(name="text-bot")}
    )
    assert code == 201, body


def test_a_bad_manifest_file_says_what_is_wrong(client: FlaskClient, world: World) -> None:
    bad = io.BytesIO(b'name = "Bad Name"\nlanguage = "cobol"\n')
    code, body = post(client, world, {"file": source(), "manifest": (bad, "bot.toml")})
    assert code == 422
    message = body["error"]["message"]
    assert "missing required field(s) games, run" in message and "'language'" in message


def test_a_manifest_given_twice_or_not_as_text_is_refused(
    client: FlaskClient, world: World
) -> None:
    toml = MANIFEST.format(name="twice-bot")
    both = {"file": source(), "manifest": [toml, (io.BytesIO(toml.encode()), "bot.toml")]}
    code, body = post(client, world, both)
    assert code == 422 and "give the manifest once" in body["error"]["message"]
    binary = {"file": source(), "manifest": (io.BytesIO(b"\xff\xfe\x00bot"), "bot.toml")}
    code, body = post(client, world, binary)
    assert code == 422 and "not UTF-8 text" in body["error"]["message"]
    huge = {"file": source(), "manifest": (io.BytesIO(b"#" * 70_000), "bot.toml")}
    code, body = post(client, world, huge)
    assert code == 422 and "the manifest is over 64 KiB" in body["error"]["message"]
