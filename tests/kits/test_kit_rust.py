"""The Rust kit's own tests (``sample_bots/kit/rust/kozyri_tests.rs``, ``rustc --test``):
parsing a request, answering it, rebuilding an observation from deltas exactly, and the clear
error for a malformed message."""

from __future__ import annotations

from pathlib import Path

from tests.kits.languages import KIT, program_or_skip, run_ok


def test_the_rust_kit_passes_its_own_tests(tmp_path: Path) -> None:
    rustc = program_or_skip("rustc", "Rust")
    runner = tmp_path / "kozyri-tests"
    run_ok(
        [
            rustc,
            "--edition",
            "2021",
            "-D",
            "warnings",
            "--test",
            "kozyri_tests.rs",
            "-o",
            str(runner),
        ],
        KIT / "rust",
    )
    done = run_ok([str(runner)], tmp_path)
    assert "test a_delta_rebuilds_the_whole_observation_exactly ... ok" in done.stdout
    assert "test result: ok. 6 passed" in done.stdout, done.stdout
