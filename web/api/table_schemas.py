"""Wire formats of the tables API (a person playing bots): bodies and payloads."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

_ID = validate.Range(1, 2**31 - 1)


class TableBody(Schema):
    game = fields.String(required=True, validate=validate.Length(1, 48))
    variant = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.Length(1, 48),
        metadata={"description": "one of the game's variants (its default if left out)"},
    )
    players = fields.Integer(
        load_default=None,
        allow_none=True,
        validate=validate.Range(1, 16),
        metadata={"description": "the table size (the game's default if left out)"},
    )
    deals = fields.Integer(
        load_default=None,
        allow_none=True,
        validate=validate.Range(1, 100),
        metadata={"description": "the match's length in deals (the game's default if left out)"},
    )
    params = fields.Dict(
        keys=fields.String(validate=validate.Length(1, 48)),
        load_default=dict,
        validate=validate.Length(max=32),
        metadata={"description": "any of the game's parameters (`GET /games` lists them)"},
    )
    seat = fields.Integer(
        load_default=0, validate=validate.Range(0, 15), metadata={"description": "your seat"}
    )
    opponents = fields.List(
        fields.Integer(validate=_ID),
        required=True,
        validate=validate.Length(1, 15),
        metadata={"description": "bot ids for the other seats, in seat order"},
    )


class ActionBody(Schema):
    request_id = fields.Integer(
        required=True,
        validate=validate.Range(1, 10_000_000),
        metadata={"description": "the turn answered (its `request_id`)"},
    )
    index = fields.Integer(
        required=True,
        validate=validate.Range(0, 10_000),
        metadata={"description": "the chosen action's index in `legal_actions`"},
    )


class OpponentArgs(Schema):
    game = fields.String(required=True, validate=validate.Length(1, 48))


class Opponent(Schema):
    id = fields.Integer(required=True)
    name = fields.String(required=True)
    owner = fields.String(required=True)
    house = fields.Boolean(required=True)


class Turn(Schema):
    """What the seat is asked: exactly what a bot's request carries, plus the labels."""

    seat = fields.Integer(required=True)
    request_id = fields.Integer(required=True)
    step = fields.Integer(required=True, metadata={"description": "decisions made so far"})
    deal = fields.Integer(required=True)
    observation = fields.Dict(required=True, metadata={"description": "your seat's view"})
    legal_actions = fields.List(fields.Raw(), required=True)
    labels = fields.List(fields.String(), required=True)
    time_left_ms = fields.Integer(required=True, metadata={"description": "your bank left"})
    move_ms = fields.Integer(required=True, metadata={"description": "free time per move"})
    strikes = fields.Integer(required=True)
    max_strikes = fields.Integer(required=True)
    deadline_ms = fields.Integer(
        required=True, metadata={"description": "when the turn times out (Unix ms)"}
    )


class Table(Schema):
    match = fields.Integer(required=True)
    status = fields.String(required=True)
    game = fields.Dict(required=True, metadata={"description": "the game's configuration"})
    seat = fields.Integer(required=True, metadata={"description": "your seat"})
    seats = fields.List(fields.String(), required=True)
    move_s = fields.Float(required=True, metadata={"description": "your free time per move"})
    bank_s = fields.Float(required=True, metadata={"description": "your time bank"})
    turn = fields.Nested(Turn, allow_none=True, required=True)
    turn_left_ms = fields.Integer(
        allow_none=True, required=True, metadata={"description": "until the turn times out"}
    )
    watch = fields.Boolean(
        required=True, metadata={"description": "whether the replay so far can be read"}
    )
    places = fields.List(fields.Integer(), allow_none=True, required=True)
    url = fields.String(required=True, metadata={"description": "the table's page"})
