"""Regenerate golden replays: ``python -m tests.golden [GAME ...]`` (all games by default)."""

from __future__ import annotations

import sys

from arena.replay import write_replay
from tests.golden import case_id, game_cases, golden_path, golden_replay, load_spec


def main(argv: list[str]) -> int:
    wanted = set(argv)
    cases = game_cases()
    unknown = wanted - {case[0] for case in cases} - {case_id(case) for case in cases}
    if unknown:
        known = ", ".join(case_id(case) for case in cases)
        print(f"no game or variant {', '.join(sorted(unknown))}; known: {known}", file=sys.stderr)
        return 2
    for case in cases:
        name = case[0]
        if wanted and name not in wanted and case_id(case) not in wanted:
            continue
        if load_spec(name) is None:
            print(f"{case_id(case)}: skipped (game not available)")
            continue
        replay = golden_replay(case)
        write_replay(golden_path(case), replay, indent=True)
        print(f"{golden_path(case).name}: {len(replay['steps'])} steps")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
