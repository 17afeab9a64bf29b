"""The C# kit's own tests (``sample_bots/kit/csharp/tests/KitTest.cs``, a small exe): parsing a
request, answering it, rebuilding an observation from deltas exactly, and the clear error for a
malformed message."""

from __future__ import annotations

from pathlib import Path

from tests.kits.languages import KIT, program_or_skip, run_ok


def test_the_csharp_kit_passes_its_own_tests(tmp_path: Path) -> None:
    mcs = program_or_skip("mcs", "C# (Mono)")
    mono = program_or_skip("mono", "C# (Mono)")
    exe = tmp_path / "kit-test.exe"
    run_ok(
        [mcs, "-warnaserror+", f"-out:{exe}", "tests/KitTest.cs", "Json.cs", "Bot.cs"],
        KIT / "csharp",
    )
    done = run_ok([mono, str(exe)], KIT / "csharp")
    assert done.stdout.rstrip().endswith("all passed"), done.stdout
    assert "FAIL" not in done.stdout
