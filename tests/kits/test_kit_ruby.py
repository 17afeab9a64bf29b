"""The Ruby kit's own tests (``sample_bots/kit/ruby/tests/test_kit.rb``, minitest), run."""

from __future__ import annotations

from pathlib import Path

from tests.kits.support import KIT, run, toolchain, write_deltas


def test_the_ruby_kit_passes_its_own_tests(tmp_path: Path) -> None:
    ruby = toolchain("ruby")["ruby"]
    kit = KIT / "ruby"
    deltas = tmp_path / "deltas.jsonl"
    count = write_deltas(deltas)
    test = str(kit / "tests" / "test_kit.rb")
    output = run([ruby, "-I", str(kit), test], tmp_path, env={"KOZYRI_DELTAS": str(deltas)})
    assert f"ok ({count} observations rebuilt)" in output
    assert "0 failures, 0 errors, 0 skips" in output
