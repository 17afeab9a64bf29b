"""The C kit's own tests (``sample_bots/kit/c/tests/test_kit.c``), compiled and run."""

from __future__ import annotations

from pathlib import Path

from tests.kits.support import KIT, run, toolchain, write_deltas


def test_the_c_kit_passes_its_own_tests(tmp_path: Path) -> None:
    gcc = toolchain("gcc")["gcc"]
    kit = KIT / "c"
    program = tmp_path / "test_kit"
    flags = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
    sources = [str(kit / "tests" / "test_kit.c"), str(kit / "kozyri_bot.c")]
    run([gcc, *flags, "-I", str(kit), "-o", str(program), *sources], tmp_path)
    deltas = tmp_path / "deltas.jsonl"
    count = write_deltas(deltas)
    output = run([str(program), str(deltas)], tmp_path)
    assert f"ok ({count} observations rebuilt)" in output
    assert "malformed message from the referee (line 1): not a JSON object" in output
