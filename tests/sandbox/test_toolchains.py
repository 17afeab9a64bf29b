"""Toolchains outside ``/usr`` in the bwrap sandbox: found where they really are, bound
read-only folder by folder, and nothing more of the host's ``/etc`` or home folders."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from sandbox.base import Sandbox
from sandbox.build import build_copy
from sandbox.toolchains import (
    RUST_MOUNT,
    alternatives_dirs,
    java_config_dirs,
    rust_binds,
    rust_sysroot,
    staged_rust,
)


def _fake_sysroot(root: Path) -> Path:
    (root / "bin").mkdir(parents=True)
    (root / "lib" / "rustlib").mkdir(parents=True)
    (root / "bin" / "rustc").write_text("#!/bin/sh\n")
    (root / "bin" / "rustc").chmod(0o755)
    (root / "lib" / "rustlib" / "libstd.rlib").write_text("std")
    (root / "share").mkdir()
    (root / "share" / "secret").write_text("docs")
    return root


def test_a_toolchain_the_sandbox_uid_cannot_reach_is_shown_through_a_linked_tree(
    tmp_path: Path,
) -> None:
    sysroot = _fake_sysroot(tmp_path / "home" / "toolchain")
    binds = rust_binds(str(sysroot), readable=lambda path: False)
    assert [inside for _, inside in binds] == [RUST_MOUNT]  # one bind: the tree holds no more
    staged = Path(binds[0][0])
    assert staged == staged_rust(str(sysroot)) and staged != sysroot
    std = staged / "lib" / "rustlib" / "libstd.rlib"
    assert std.read_text() == "std"
    assert os.stat(std).st_ino == os.stat(sysroot / "lib" / "rustlib" / "libstd.rlib").st_ino
    assert stat.S_IMODE(os.stat(staged / "lib" / "rustlib").st_mode) == 0o755
    assert not (staged / "share").exists()  # only bin and lib


def test_a_reachable_toolchain_is_bound_where_it_is(tmp_path: Path) -> None:
    sysroot = _fake_sysroot(tmp_path / "toolchain")
    binds = rust_binds(str(sysroot), readable=lambda path: True)
    assert binds == [
        (str(sysroot / "bin"), "/opt/rust/bin"),
        (str(sysroot / "lib"), "/opt/rust/lib"),
    ]


def test_a_rustc_under_usr_needs_nothing_and_a_missing_one_is_none(tmp_path: Path) -> None:
    assert rust_sysroot("/usr/bin/true") is None
    assert rust_sysroot(str(tmp_path / "no-rustc")) is None


def test_the_jdk_configuration_is_found_through_its_links() -> None:
    java = shutil.which("java")
    if java is None:
        pytest.skip("no java here")
    found = java_config_dirs(java)
    assert found and all(d.startswith("/etc/java") for d in found), found


def test_compilers_build_in_the_sandbox_without_the_host_etc_or_home(
    bwrap_sandbox: Sandbox,
    open_dir: Path,
) -> None:
    source = open_dir / "source"
    source.mkdir()
    (source / "bot.toml").write_text("")
    probes = ["ls /etc", "cat /etc/passwd", "ls /root"]
    tools = {"javac": "javac -version", "mcs": "mcs --version", "rustc": "rustc --version"}
    present = {t for t in tools if shutil.which(t) or (t == "rustc" and rust_sysroot())}
    # Each probe writes its errors to stdout too, so that they come in order.
    steps = [f"echo '# {p}'; {p} 2>&1" for p in probes] + [f"{tools[t]} 2>&1" for t in present]
    script = "; ".join(steps)
    result = build_copy(
        bwrap_sandbox, source, open_dir / "built", ["sh", "-c", script + "; true"], timeout_s=120
    )
    log = result.log.split("\n", 1)[1]  # the output, after the line that shows the command
    listed = log.split("# ls /etc")[1].split("# cat /etc/passwd")[0].split()
    allowed = {"ld.so.cache", "localtime", *[d.split("/")[2] for d in java_config_dirs()]}
    allowed |= {"mono", *[d.split("/")[2] for d in alternatives_dirs()]}
    assert set(listed) <= allowed, listed
    assert "No such file" in log.split("# cat /etc/passwd")[1].split("# ls /root")[0]
    assert "Error loading java.security" not in log
    if "javac" in present:
        assert "javac " in log, log
    if "rustc" in present:
        assert "rustc 1." in log, log


def test_a_command_naming_rustc_directly_finds_the_mounted_compiler(
    bwrap_sandbox: Sandbox, open_dir: Path
) -> None:
    """``build = ["rustc", ...]`` works as well as through ``sh -c``: the command is pointed
    at the compiler shown at ``RUST_MOUNT`` when the host's is rustup's, outside ``/usr``."""
    found = shutil.which("rustc")
    if found is None or os.path.realpath(found).startswith("/usr/") or rust_sysroot() is None:
        pytest.skip("this machine's rustc is not rustup's (nothing to show at a mount)")
    source = open_dir / "direct"
    source.mkdir()
    (source / "bot.toml").write_text("")
    result = build_copy(
        bwrap_sandbox, source, open_dir / "direct-built", ["rustc", "--version"], timeout_s=120
    )
    assert result.ok and "rustc 1." in result.log, result.log
