"""The Go kit's own tests (``sample_bots/kit/go/src/kozyri/kozyri_test.go``, ``go test``):
parsing a request, answering it, rebuilding an observation from deltas exactly, and the clear
error for a malformed message."""

from __future__ import annotations

from pathlib import Path

from tests.kits.languages import KIT, program_or_skip, run_ok


def test_the_go_kit_passes_its_own_tests(tmp_path: Path) -> None:
    go = program_or_skip("go", "Go")
    env = {
        "GO111MODULE": "off",
        "GOPATH": str(KIT / "go"),
        "GOCACHE": str(tmp_path / "cache"),
        "GOPROXY": "off",
    }
    vetted = run_ok([go, "vet", "kozyri"], KIT / "go", env)
    done = run_ok([go, "test", "-count=1", "-v", "kozyri"], KIT / "go", env)
    assert "--- PASS: TestADeltaRebuildsTheWholeObservationExactly" in done.stdout, done.stdout
    assert "FAIL" not in done.stdout + vetted.stdout
