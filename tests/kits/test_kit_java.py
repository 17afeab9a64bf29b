"""The Java kit's own tests (``sample_bots/kit/java/tests/KitTest.java``, a plain main):
parsing a request, answering it, rebuilding an observation from deltas exactly, and the clear
error for a malformed message."""

from __future__ import annotations

from pathlib import Path

from tests.kits.languages import KIT, program_or_skip, run_ok


def test_the_java_kit_passes_its_own_tests(tmp_path: Path) -> None:
    javac = program_or_skip("javac", "Java")
    java = program_or_skip("java", "Java")
    run_ok(
        [
            javac,
            "-Xlint:all",
            "-Werror",
            "-d",
            str(tmp_path),
            "-sourcepath",
            ".",
            "tests/KitTest.java",
        ],
        KIT / "java",
    )
    done = run_ok([java, "-cp", str(tmp_path), "KitTest"], KIT / "java")
    assert done.stdout.rstrip().endswith("all passed"), done.stdout
    assert "FAIL" not in done.stdout
