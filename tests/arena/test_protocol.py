"""Protocol v1: encoding, decoding, the documented schemas, and a fuzzed line reader."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from arena.bots import load_bot
from arena.games import make_game
from arena.protocol import (
    MAX_DEBUG_CHARS,
    MAX_LINE_BYTES,
    ActionReply,
    BotError,
    DealEnd,
    ErrorNotice,
    Hello,
    LineReader,
    LineTooLong,
    MatchEnd,
    ProtocolError,
    Ready,
    RefereeMessage,
    Request,
    Shutdown,
    TimeInfo,
    decode_bot_message,
    encode,
)
from arena.runner import BuiltinBot, run_match
from sandbox import get_sandbox

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"


def validator(name: str) -> Draft202012Validator:
    schema = json.loads((SCHEMAS / f"{name}.json").read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


REFEREE_MESSAGES: list[tuple[str, RefereeMessage]] = [
    (
        "hello",
        Hello(
            game="svoi-kozyri",
            players=4,
            seat=2,
            params={"deals": 8},
            variant=None,
            time=TimeInfo(init_ms=10000, move_ms=1000, bank_ms=30000),
            name="my-bot",
        ),
    ),
    (
        "request",
        Request(
            id=7,
            deal=0,
            observation={"hand": ["TH", "6C"], "pile": ["9C"]},
            legal_actions=[{"type": "beat", "card": "TH"}, {"type": "pick_up"}],
            time_left_ms=29500,
            move_ms=1000,
        ),
    ),
    (
        "request",
        Request(
            id=8,
            deal=0,
            observation={"set": {"hand": ["6C"]}, "append": {"history": [{"type": "pick_up"}]}},
            legal_actions=[{"type": "lead", "card": "6C"}],
            time_left_ms=29500,
            move_ms=1000,
            delta=True,
        ),
    ),
    ("error_notice", ErrorNotice(7, "illegal_action", "not legal now", 1, 3)),
    ("deal_end", DealEnd(0, {"fools": [0, 1, 0, 0]})),
    ("deal_end", DealEnd(0, {"set": {"fools": [0, 1, 0, 0]}, "drop": ["trick"]}, delta=True)),
    ("match_end", MatchEnd({"ranking": [1, 2], "scores": [1.0, 0.0], "detail": {}}, 1, "ok")),
    ("shutdown", Shutdown()),
]

BOT_MESSAGES: list[tuple[str, dict[str, Any], type]] = [
    ("ready", {"type": "ready", "protocol": 1}, Ready),
    ("ready", {"type": "ready", "protocol": 1, "name": "Ivan"}, Ready),
    ("ready", {"type": "ready", "protocol": 1, "observations": "delta"}, Ready),
    ("ready", {"type": "ready", "protocol": 1, "observations": "full"}, Ready),
    ("action", {"type": "action", "id": 3, "index": 0}, ActionReply),
    ("action", {"type": "action", "action": {"type": "lead", "card": "9C"}}, ActionReply),
    ("action", {"type": "action", "id": 1, "index": 2, "debug": "why"}, ActionReply),
    ("bot_error", {"type": "error", "message": "lost track of the pile"}, BotError),
]

INVALID_BOT_LINES = [
    b"",
    b"hello",
    b"[1, 2]",
    b'{"type": "acton", "index": 0}',
    b'{"index": 0}',
    b'{"type": "action"}',
    b'{"type": "action", "index": 0, "action": {"type": "pick_up"}}',
    b'{"type": "action", "index": "0"}',
    b'{"type": "action", "index": true}',
    b'{"type": "action", "action": "pick_up"}',
    b'{"type": "action", "index": 0, "debug": 5}',
    b'{"type": "action", "index": 0, "id": "7"}',
    b'{"type": "ready"}',
    b'{"type": "ready", "protocol": "1"}',
    b'{"type": "ready", "protocol": 1, "observations": "deltas"}',
    b'{"type": "ready", "protocol": 1, "observations": null}',
    b'{"type": "ready", "protocol": 1, "observations": ["delta"]}',
    b'{"type": "error", "message": 3}',
    b"\xff\xfe{}",
]


@pytest.mark.parametrize(("schema", "message"), REFEREE_MESSAGES)
def test_referee_messages_match_their_schema(schema: str, message: RefereeMessage) -> None:
    line = encode(message)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    validator(schema).validate(orjson.loads(line))


@pytest.mark.parametrize(("schema", "obj", "kind"), BOT_MESSAGES)
def test_documented_bot_messages_decode(schema: str, obj: dict[str, Any], kind: type) -> None:
    validator(schema).validate(obj)
    assert isinstance(decode_bot_message(orjson.dumps(obj)), kind)


@pytest.mark.parametrize("line", INVALID_BOT_LINES)
def test_invalid_bot_lines_are_refused_with_a_reason(line: bytes) -> None:
    with pytest.raises(ProtocolError) as info:
        decode_bot_message(line)
    assert str(info.value)


def test_every_schema_file_is_a_valid_schema() -> None:
    names = {p.stem for p in SCHEMAS.glob("*.json")}
    protocol = {n for n, _ in REFEREE_MESSAGES} | {n for n, _, _ in BOT_MESSAGES}
    assert protocol <= names
    for name in names:
        validator(name)


def test_ready_says_how_the_bot_wants_its_observations() -> None:
    plain = decode_bot_message(b'{"type": "ready", "protocol": 1}')
    delta = decode_bot_message(b'{"type": "ready", "protocol": 1, "observations": "delta"}')
    assert isinstance(plain, Ready) and plain.observations == "full"
    assert isinstance(delta, Ready) and delta.observations == "delta"


@pytest.mark.parametrize(
    ("mode", "shown"),
    [(b'"xml"', '"xml"'), (b"1", "1"), (b"null", "null"), (b'{"a": "' + b"b" * 99 + b'"}', "...")],
)
def test_an_unknown_observation_mode_is_refused_clearly(mode: bytes, shown: str) -> None:
    with pytest.raises(ProtocolError) as info:
        decode_bot_message(b'{"type": "ready", "protocol": 1, "observations": ' + mode + b"}")
    assert str(info.value).startswith("ready 'observations' must be 'full' or 'delta', got ")
    assert shown in str(info.value)


def test_debug_text_is_cut_not_refused() -> None:
    msg = decode_bot_message(orjson.dumps({"type": "action", "index": 0, "debug": "d" * 5000}))
    assert isinstance(msg, ActionReply) and msg.debug == "d" * MAX_DEBUG_CHARS


def test_long_line_is_a_flood() -> None:
    with pytest.raises(LineTooLong):
        decode_bot_message(b" " * (MAX_LINE_BYTES + 1))
    reader = LineReader()
    with pytest.raises(LineTooLong):
        reader.feed(b"x" * (MAX_LINE_BYTES + 1))


scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=4,
)
fuzz = settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)


@fuzz
@given(st.binary(max_size=300))
def test_random_bytes_never_escape_as_another_error(data: bytes) -> None:
    try:
        decode_bot_message(data)
    except ProtocolError:
        pass


@fuzz
@given(
    st.sampled_from(["ready", "action", "error", "hello", None, 3]),
    st.dictionaries(
        st.sampled_from(["protocol", "name", "id", "action", "index", "debug", "message"]),
        json_values,
    ),
)
def test_wrong_types_are_refused_or_decoded(kind: Any, fields: dict[str, Any]) -> None:
    obj = {"type": kind, **fields}
    try:
        msg = decode_bot_message(orjson.dumps(obj))
    except ProtocolError:
        return
    assert kind in ("ready", "action", "error")
    assert isinstance(msg, Ready | ActionReply | BotError)
    if isinstance(msg, ActionReply):
        assert (msg.action is None) != (msg.index is None)


@fuzz
@given(st.dictionaries(st.sampled_from(["id", "index", "debug"]), st.integers(0, 10**6)))
def test_schema_valid_actions_always_decode(fields: dict[str, Any]) -> None:
    obj: dict[str, Any] = {"type": "action", **fields}
    if "debug" in obj:
        obj["debug"] = str(obj["debug"])
    if validator("action").is_valid(obj):
        assert isinstance(decode_bot_message(orjson.dumps(obj)), ActionReply)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(st.binary(max_size=200), max_size=20), st.integers(1, 400))
def test_line_reader_splits_any_stream_like_bytes_split(chunks: list[bytes], limit: int) -> None:
    stream = b"".join(chunks)
    reader = LineReader(limit)
    lines: list[bytes] = []
    try:
        for chunk in chunks:
            lines += reader.feed(chunk)
    except LineTooLong:
        parts = stream.split(b"\n")
        assert any(len(p) > limit for p in parts)
        return
    *complete, rest = stream.split(b"\n")
    assert lines == [line.rstrip(b"\r") for line in complete]
    assert reader.pending == len(rest)


WIRE_BOT = """
import json, sys
requests = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        answer = {"type": "ready", "protocol": 1, "name": "wire"}
    elif msg["type"] == "request":
        requests += 1
        if requests == 1:  # one illegal answer and one given-up request: two error notices
            answer = {"type": "action", "id": msg["id"], "index": 999}
        elif requests == 2:
            answer = {"type": "error", "id": msg["id"], "message": "lost track"}
        else:
            answer = {"type": "action", "id": msg["id"], "index": 0, "debug": "first"}
    elif msg["type"] == "shutdown":
        break
    else:
        continue
    print(json.dumps(answer), flush=True)
"""

REFEREE_SCHEMAS = {
    "hello": "hello",
    "request": "request",
    "error": "error_notice",
    "deal_end": "deal_end",
    "match_end": "match_end",
    "shutdown": "shutdown",
}
BOT_SCHEMAS = {"ready": "ready", "action": "action", "error": "bot_error"}


def test_every_message_of_a_real_match_matches_its_schema(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text(WIRE_BOT)
    (tmp_path / "bot.toml").write_text(
        'name = "wire"\ngames = ["svoi-kozyri"]\nlanguage = "python"\nrun = ["python3", "bot.py"]\n'
    )
    game = make_game("svoi-kozyri", players=3, params={"deals": 2})
    bots = [load_bot(tmp_path), BuiltinBot("greedy"), BuiltinBot("greedy")]
    transcript = io.BytesIO()
    outcome = run_match(game, bots, 11, sandbox=get_sandbox("none"), transcripts={0: transcript})
    assert outcome.seats[0].strikes == 2 and not outcome.seats[0].forfeited
    seen: set[str] = set()
    for line in transcript.getvalue().splitlines():
        direction, message = line[:3], orjson.loads(line[3:])
        schemas = REFEREE_SCHEMAS if direction == b"-> " else BOT_SCHEMAS
        schema = schemas[message["type"]]
        errors = list(validator(schema).iter_errors(message))
        assert errors == [], (schema, errors[0].message)
        documented = json.loads((SCHEMAS / f"{schema}.json").read_text())["properties"]
        assert set(message) <= set(documented), f"{schema}: undocumented keys"
        seen.add(schema)
    every = {p.stem for p in SCHEMAS.glob("*.json")} - {"replay"}
    assert seen == every
    assert list(validator("replay").iter_errors(outcome.replay)) == []
