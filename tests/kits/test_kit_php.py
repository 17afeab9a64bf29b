"""The PHP kit's own tests (``sample_bots/kit/php/tests/test_kit.php``), run without any
php.ini (``-n``), as a bot runs in the sandbox."""

from __future__ import annotations

from pathlib import Path

from tests.kits.support import KIT, run, toolchain, write_deltas


def test_the_php_kit_passes_its_own_tests(tmp_path: Path) -> None:
    php = toolchain("php")["php"]
    deltas = tmp_path / "deltas.jsonl"
    count = write_deltas(deltas)
    test = str(KIT / "php" / "tests" / "test_kit.php")
    output = run([php, "-n", "-d", "zend.assertions=1", test, str(deltas)], tmp_path)
    assert f"ok ({count} observations rebuilt)" in output


def test_a_failed_assertion_fails_the_php_test_script(tmp_path: Path) -> None:
    php = toolchain("php")["php"]
    script = tmp_path / "fails.php"
    script.write_text("<?php\nini_set('assert.exception', '1');\nassert(1 === 2);\necho 'ok';\n")
    with_asserts = ["-n", "-d", "zend.assertions=1"]
    try:
        run([php, *with_asserts, str(script)], tmp_path)
    except AssertionError as exc:
        assert "AssertionError" in str(exc)
    else:
        raise AssertionError("a failed assert() left the script's exit status 0")
