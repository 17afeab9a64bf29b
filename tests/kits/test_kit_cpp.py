"""The C++ kit's own tests (``sample_bots/kit/cpp/tests/test_kit.cpp``), compiled and run."""

from __future__ import annotations

from pathlib import Path

from tests.kits.support import KIT, run, toolchain, write_deltas


def test_the_cpp_kit_passes_its_own_tests(tmp_path: Path) -> None:
    gxx = toolchain("g++")["g++"]
    kit = KIT / "cpp"
    program = tmp_path / "test_kit"
    flags = ["-std=c++17", "-Wall", "-Wextra", "-Werror", "-pedantic"]
    source = str(kit / "tests" / "test_kit.cpp")
    run([gxx, *flags, "-I", str(kit), "-o", str(program), source], tmp_path)
    deltas = tmp_path / "deltas.jsonl"
    count = write_deltas(deltas)
    output = run([str(program), str(deltas)], tmp_path)
    assert f"ok ({count} observations rebuilt)" in output
    assert "malformed message from the referee (line 1): not a JSON object" in output
