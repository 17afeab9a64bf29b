"""The TypeScript kit's own tests (``sample_bots/kit/typescript/tests``): compiled with tsc
against the kit's ``kozyri_bot.d.ts`` and run with node on the JavaScript kit."""

from __future__ import annotations

from pathlib import Path

from tests.kits.support import KIT, run, toolchain, write_deltas


def test_the_typescript_kit_passes_its_own_tests(tmp_path: Path) -> None:
    tools = toolchain("tsc", "node")
    kit = KIT / "typescript"
    out = tmp_path / "out"
    tests = sorted(str(path) for path in (kit / "tests").glob("*.ts"))
    sources = [str(kit / "kozyri_bot.d.ts"), *tests]
    flags = ["--strict", "--target", "es2020", "--module", "commonjs", "--outDir", str(out)]
    run([tools["tsc"], *flags, *sources], tmp_path)
    deltas = tmp_path / "deltas.jsonl"
    count = write_deltas(deltas)
    env = {"NODE_PATH": str(KIT / "js")}
    output = run([tools["node"], str(out / "test_kit.js"), str(deltas)], tmp_path, env=env)
    assert f"ok ({count} observations rebuilt)" in output
