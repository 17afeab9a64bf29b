"""The standalone replay page built on the server (its browser side is in tests/web/browser)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from arena.games import names, viewer_script
from arena.replay import frames, read_replay
from web.viewer_export import VIEWER, manifest, rewrite_imports, standalone_html

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def _script(page: str, kind: str) -> str:
    found = re.search(rf'<script type="{kind}"[^>]*>(.*?)</script>', page, re.S)
    assert found, f"no {kind} script"
    return found[1]


def _modules(page: str) -> dict[str, str]:
    imports = json.loads(_script(page, "importmap"))["imports"]
    prefix = "data:text/javascript;charset=utf-8,"
    assert all(url.startswith(prefix) for url in imports.values())
    return {name: unquote(url.removeprefix(prefix)) for name, url in imports.items()}


@pytest.fixture(scope="module")
def svara_page() -> tuple[Any, str]:
    replay = read_replay(GOLDEN / "svara.json")
    return replay, standalone_html(replay)


def test_the_manifest_lists_every_viewer_module() -> None:
    on_disk = {p.relative_to(VIEWER).as_posix() for p in VIEWER.rglob("*.js")}
    on_disk |= {f"games/{name}.js" for name in names() if viewer_script(name)}  # game folders
    assert set(manifest()["modules"]) == on_disk


def test_every_module_is_inlined_with_only_bare_imports(svara_page: tuple[Any, str]) -> None:
    _, page = svara_page
    modules = _modules(page)
    assert set(modules) == {f"arena-viewer/{p}" for p in manifest()["modules"]}
    for name, code in modules.items():
        assert not re.search(r'from\s+"\.', code), f"{name} keeps a relative import"
        for target in re.findall(r'from\s+"([^"]+)"', code):
            assert target in modules, f"{name} imports {target}, which the page lacks"


def test_relative_imports_resolve_against_the_importing_module() -> None:
    source = 'import { a } from "../table.js";\nimport { b } from "./common.js";'
    rewritten = rewrite_imports("adapters/svara.js", source)
    assert '"arena-viewer/table.js"' in rewritten
    assert '"arena-viewer/adapters/common.js"' in rewritten


def test_the_page_embeds_the_replay_and_every_frame(svara_page: tuple[Any, str]) -> None:
    replay, page = svara_page
    data = json.loads(_script(page, "application/json"))
    assert data["replay"] == json.loads(json.dumps(replay))
    assert len(data["frames"]) == len(replay["steps"]) + 1
    assert data["frames"] == json.loads(json.dumps(frames(replay)))
    assert "__DATA__" not in page and "__CSS__" not in page
    assert ".rv-table" in page, "the viewer's CSS is inlined"


def test_text_from_the_replay_cannot_break_out_of_the_page() -> None:
    replay = read_replay(GOLDEN / "challenge.json")
    replay["seats"][0]["name"] = "</script><script>alert(1)</script>"
    replay["steps"][0]["debug"] = "<!-- </script>"
    page = standalone_html(replay, title="<b>mine</b>")
    data = json.loads(_script(page, "application/json"))
    assert data["replay"]["seats"][0]["name"] == "</script><script>alert(1)</script>"
    assert data["replay"]["steps"][0]["debug"] == "<!-- </script>"
    assert "<script>alert" not in page
    assert "<title>&lt;b&gt;mine&lt;/b&gt;</title>" in page


def test_a_running_or_sealed_replay_cannot_be_exported() -> None:
    """Served without its seed, a replay holds no hidden card to show: refused, clearly."""
    whole = read_replay(GOLDEN / "svara.json")
    live = {k: v for k, v in whole.items() if k not in ("seed", "result", "outcome")}
    sealed = {**live, "live": True, "sealed": "the replay opens when the mirrored group finishes"}
    for served in (live, sealed, {**whole, "live": True}):
        with pytest.raises(ValueError, match="running or sealed"):
            standalone_html(served)  # type: ignore[arg-type]
