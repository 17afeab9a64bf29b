"""Build steps in the sandbox: a compiled bot keeps its output, and nothing else is written.

Each test builds a private copy of a small bot folder with ``sandbox.build.build_copy`` under
every isolating backend (real bubblewrap, real containers where an engine runs) and checks on
the host what was left behind.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.bots import load_bot
from arena.games import make_game
from arena.runner import run_match
from sandbox.base import KIT_DIR, BotCommandError, Limits, Sandbox, SandboxError, start_failure
from sandbox.build import (
    MAX_DEPTH,
    MAX_FILES,
    TreeTooLarge,
    build_copy,
    check_tree,
    leads_inside,
    remove_tree,
    run_build,
    seal,
    writable_copy,
)
from tests.sandbox.conftest import REPO

C_BOT = r"""
/* Plays the first legal action of any game: the referee writes "type" first, then "id". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    char *line = NULL;
    size_t size = 0;
    while (getline(&line, &size, stdin) > 0) {
        if (strstr(line, "\"type\":\"hello\"") == line + 1) {
            printf("{\"type\":\"ready\",\"protocol\":1}\n");
        } else if (strstr(line, "\"type\":\"request\"") == line + 1) {
            char *id = strstr(line, "\"id\":");
            printf("{\"type\":\"action\",\"id\":%ld,\"index\":0}\n", strtol(id + 5, NULL, 10));
        } else if (strstr(line, "\"type\":\"shutdown\"") == line + 1) {
            break;
        }
        fflush(stdout);
    }
    free(line);
    return 0;
}
"""

MANIFEST = """name = "first-legal-c"
games = ["svoi-kozyri"]
language = "c"
build = {build}
run = ["./bot"]
"""

GCC = '["gcc", "-O2", "-o", "bot", "bot.c"]'


def bot_folder(parent: Path, build: str = GCC) -> Path:
    """A C bot's source folder (no binary) with ``build`` as its build command."""
    folder = parent / "source"
    folder.mkdir()
    (folder / "bot.c").write_text(C_BOT)
    (folder / "bot.toml").write_text(MANIFEST.format(build=build))
    return folder


def require_compiler(sandbox: Sandbox, scratch: Path) -> None:
    """Fail unless ``gcc`` runs inside ``sandbox``: the runner image carries it; under
    bubblewrap it is the host's (a skip where it has none, unless every language is required)."""
    probe = run_build(sandbox, scratch, ["gcc", "--version"], 30, _limits())
    if probe.ok:
        return
    problem = f"no C compiler in the {sandbox.name} sandbox: {probe.log.strip()}"
    if sandbox.name == "docker" or os.environ.get("ARENA_REQUIRE_LANGUAGES") == "1":
        pytest.fail(problem)
    pytest.skip(problem)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_c_bot_builds_in_the_sandbox_and_plays_a_match(
    any_sandbox: Sandbox, open_dir: Path
) -> None:
    require_compiler(any_sandbox, open_dir)
    source = bot_folder(open_dir)
    before = snapshot(source)
    built = open_dir / "built"
    result = build_copy(
        any_sandbox, source, built, ["gcc", "-O2", "-o", "bot", "bot.c"], timeout_s=60
    )
    assert result.ok, result.log
    assert "exit status: 0" in result.log
    assert snapshot(source) == before  # the upload itself is never written
    binary = built / "bot"
    assert binary.is_file() and os.access(binary, os.X_OK)
    # Sealed: the referee's, and writable by nobody else.
    assert binary.stat().st_uid == os.geteuid()
    assert not binary.stat().st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    bot = load_bot(built)
    played = run_match(make_game("svoi-kozyri", 2), [bot, bot], 7, sandbox=any_sandbox)
    assert [seat.status for seat in played.seats] == ["ok", "ok"], played.seats
    assert sorted(played.result.ranking) in ([1, 2], [1, 1])


def test_a_build_that_writes_outside_its_folder_fails_and_leaves_nothing(
    any_sandbox: Sandbox, open_dir: Path
) -> None:
    escape = open_dir / "escaped"
    source = bot_folder(open_dir)
    script = (
        f"echo inside > built.txt; echo out > {escape}; echo up > ../up.txt; "
        "echo root > /escaped-root"
    )
    built = open_dir / "built"
    result = build_copy(any_sandbox, source, built, ["sh", "-ec", script], timeout_s=30)
    assert not result.ok
    assert "exit status:" in result.log and "exit status: 0" not in result.log
    assert not built.exists()
    assert not escape.exists() and not Path("/escaped-root").exists()
    assert sorted(p.name for p in open_dir.iterdir()) == ["source"]
    assert not (source / "built.txt").exists()
    # Each way out, tried on its own, is refused (and reported in the log).
    targets = [str(escape), "../up.txt", "/escaped-root", "/usr/escaped", "/kit/escaped"]
    attempts = " ".join(f"echo x > {t} || echo refused {t};" for t in targets)
    result = build_copy(any_sandbox, source, built, ["sh", "-c", attempts], timeout_s=30)
    assert result.ok, result.log
    assert [f"refused {t}" in result.log for t in targets] == [True] * len(targets)
    assert sorted(p.name for p in built.iterdir()) == ["bot.c", "bot.toml"]
    assert not escape.exists() and not Path("/escaped-root").exists()
    assert not Path("/usr/escaped").exists() and not (KIT_DIR / "escaped").exists()


def test_a_build_that_runs_too_long_is_stopped_with_a_clear_log_line(
    any_sandbox: Sandbox, open_dir: Path
) -> None:
    source = bot_folder(open_dir)
    built = open_dir / "built"
    began = time.monotonic()
    result = build_copy(
        any_sandbox, source, built, ["sh", "-c", "echo compiling; sleep 60"], timeout_s=2
    )
    assert time.monotonic() - began < 20
    assert not result.ok and result.timed_out
    assert "compiling" in result.log
    assert "build stopped: still running after the 2 s build time limit" in result.log
    assert not built.exists()


def test_a_build_that_fails_to_compile_keeps_the_compiler_errors(
    bwrap_sandbox: Sandbox, open_dir: Path
) -> None:
    source = bot_folder(open_dir)
    (source / "bot.c").write_text("int main(void) { return undefined_name; }\n")
    built = open_dir / "built"
    result = build_copy(bwrap_sandbox, source, built, ["gcc", "-o", "bot", "bot.c"], timeout_s=60)
    assert not result.ok and result.returncode == 1
    assert "undefined_name" in result.log
    assert not built.exists()


@pytest.mark.parametrize("writable", [False, True])
def test_the_bot_folder_is_writable_only_when_asked(
    bwrap_sandbox: Sandbox, open_dir: Path, writable: bool
) -> None:
    staging = open_dir / "staging"
    staging.mkdir()
    workdir = writable_copy(bot_folder(open_dir), staging, bwrap_sandbox.writer_uid(0))
    if writable:
        result = run_build(bwrap_sandbox, workdir, ["sh", "-c", "echo x > out"], 30, _limits())
    else:
        process = bwrap_sandbox.spawn(workdir, ["sh", "-c", "echo x > out"], _limits())
        process.wait(30)
        process.close()
        result = None
    assert (workdir / "out").exists() == writable
    if result is not None:
        assert result.ok, result.log


def _limits() -> Limits:
    return Limits(cpu_seconds=30)


PY_BOT = """import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "ready", "protocol": 1}), flush=True)
    elif message["type"] == "request":
        print(json.dumps({"type": "action", "id": message["id"], "index": 0}), flush=True)
    elif message["type"] == "shutdown":
        break
"""


def test_what_a_build_writes_is_what_the_match_runs(any_sandbox: Sandbox, open_dir: Path) -> None:
    """Every runner image has Python, so this holds under Docker too: the program the match
    starts exists only because the build step wrote it."""
    source = open_dir / "source"
    source.mkdir()
    (source / "template.txt").write_text(PY_BOT)
    (source / "bot.toml").write_text(
        'name = "generated"\ngames = ["svoi-kozyri"]\nlanguage = "python"\n'
        'run = ["python3", "generated/bot.py"]\n'
    )
    script = (
        "import os, shutil; os.mkdir('generated'); shutil.copy('template.txt', 'generated/bot.py')"
    )
    built = open_dir / "built"
    result = build_copy(any_sandbox, source, built, ["python3", "-c", script], timeout_s=30)
    assert result.ok, result.log
    assert not (source / "generated").exists()
    assert (built / "generated" / "bot.py").read_text() == PY_BOT
    bot = load_bot(built)
    played = run_match(make_game("svoi-kozyri", 2), [bot, bot], 3, sandbox=any_sandbox)
    assert [seat.status for seat in played.seats] == ["ok", "ok"], played.seats


def test_python_m_sandbox_build_builds_a_bot_folder_as_the_platform_does(
    bwrap_sandbox: Sandbox, open_dir: Path
) -> None:
    source = bot_folder(open_dir)
    built = open_dir / "built"
    argv = [sys.executable, "-m", "sandbox.build", str(source), str(built), "--timeout", "60"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "$ gcc -O2 -o bot bot.c" in done.stdout and "exit status: 0" in done.stdout
    assert os.access(built / "bot", os.X_OK)
    (source / "bot.c").write_text("broken(\n")
    done = subprocess.run(
        [*argv[:4], str(open_dir / "again")], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1 and "exit status: 1" in done.stdout
    assert not (open_dir / "again").exists()


def test_the_c_sample_bot_builds_and_plays_without_a_strike(
    bwrap_sandbox: Sandbox, open_dir: Path
) -> None:
    source = REPO / "sample_bots" / "c" / "svoi-kozyri-random"
    manifest = load_bot(source)
    assert manifest.build is not None
    built = open_dir / "built"
    result = build_copy(bwrap_sandbox, source, built, manifest.build, timeout_s=60)
    assert result.ok, result.log
    c_bot = load_bot(built)
    python_bot = load_bot(REPO / "sample_bots" / "python" / "svoi-kozyri-random")
    game = make_game("svoi-kozyri", 3)
    played = run_match(game, [c_bot, python_bot, c_bot], 5, sandbox=bwrap_sandbox)
    assert [(s.status, s.strikes) for s in played.seats] == [("ok", 0)] * 3, played.seats
    chosen = {step["action"]["type"] for step in played.replay["steps"] if step["seat"] != 1}
    assert len(chosen) > 1  # not always the same kind of move: it does choose at random


def test_links_leading_out_and_special_files_are_removed_from_a_build(
    bwrap_sandbox: Sandbox, open_dir: Path
) -> None:
    source = bot_folder(open_dir)
    script = (
        "mkdir lib && echo code > lib/a.so.1 && ln -s a.so.1 lib/a.so && "
        "ln -s /etc/hostname absolute && ln -s ../../../etc/hostname climbing && mkfifo pipe"
    )
    built = open_dir / "built"
    result = build_copy(bwrap_sandbox, source, built, ["sh", "-ec", script], timeout_s=30)
    assert result.ok, result.log
    assert "removed from the built folder" in result.log
    assert "absolute, climbing, pipe" in result.log
    assert (built / "lib" / "a.so").read_text() == "code\n"  # a link inside the folder stays
    assert sorted(p.name for p in built.iterdir()) == ["bot.c", "bot.toml", "lib"]


def test_links_judged_by_where_they_really_lead_through_chains(
    bwrap_sandbox: Sandbox, open_dir: Path
) -> None:
    """Each link's text stays inside, but followed link by link they climb out (to the host's
    files once stored), dangle or loop: all removed; links that really stay inside are kept."""
    source = bot_folder(open_dir)
    script = (
        "mkdir -p d lib && echo code > lib/a.so.1 && ln -s a.so.1 lib/a.so && "
        "ln -s .. d/top && ln -s top/.. d/up && ln -s up/.. d/up2 && ln -s up2/.. d/up3 && "
        "ln -s up3/.. d/up4 && ln -s d/up4/etc/hostname host && "
        "ln -s d/top/../built/lib/a.so renamed && ln -s d/top/lib/a.so fine && "
        "ln -s gone dangling && ln -s dangling dangling2 && ln -s loop1 loop2 && "
        "ln -s loop2 loop1"
    )
    built = open_dir / "built"
    result = build_copy(bwrap_sandbox, source, built, ["sh", "-ec", script], timeout_s=30)
    assert result.ok, result.log
    removed = "d/up, d/up2, d/up3, d/up4, dangling, dangling2, host, loop1, loop2, renamed"
    assert f"(special files, links not leading inside): {removed}" in result.log
    assert (built / "fine").read_text() == "code\n"
    assert os.readlink(built / "d" / "top") == ".."  # the folder itself: inside
    leads = {os.path.realpath(p) for p in built.rglob("*") if p.is_symlink()}
    assert all(Path(p).is_relative_to(built.resolve()) for p in leads), leads


def test_a_build_that_changes_its_manifest_fails(bwrap_sandbox: Sandbox, open_dir: Path) -> None:
    source = bot_folder(open_dir)
    built = open_dir / "built"
    script = "sed -i 's|./bot|/usr/bin/sh|' bot.toml"
    result = build_copy(bwrap_sandbox, source, built, ["sh", "-ec", script], timeout_s=30)
    assert not result.ok
    assert "the build changed bot.toml, which it must leave as it was" in result.log
    assert not built.exists()


# Each escaping link, by where it really leads: name -> link text, made in this order.
ESCAPING = {
    "d/x": "..",  # the folder itself: allowed on its own, but a step for the next one
    "d/y": "x/../../../../../../../../etc/shadow",  # through d/x, then above the folder
    "absolute": "/etc/hostname",
    "climbing": "../../../etc/hostname",
    "loop_a": "loop_b",
    "loop_b": "loop_a",
    "self": "self",
    "dangling": "no-such-file",
    "to_outside": "/tmp",
    "link_to_link_out": "to_outside",
    "through_dir_link/passwd": None,  # made below: a link inside a folder that is a link
    "via_file": "lib/a.so.1/..",
    "out_and_back": "../built/lib/a.so.1",
}


def _escaping_tree(folder: Path) -> None:
    (folder / "lib").mkdir(parents=True)
    (folder / "lib" / "a.so.1").write_text("code\n")
    (folder / "d").mkdir()
    for name, text in ESCAPING.items():
        if text is not None:
            os.symlink(text, folder / name)
    os.symlink("../d/x/..", folder / "lib" / "up")  # the folder's parent
    os.symlink("lib/up/etc", folder / "through_dir_link")  # a folder that is a link, out
    # Legitimate links, which must survive: to a file, to a link to a file, through a folder
    # link, to a folder, and the folder itself.
    os.symlink("a.so.1", folder / "lib" / "a.so")
    os.symlink("lib/a.so", folder / "chain_in")
    os.symlink("lib", folder / "libdir")
    os.symlink("libdir/a.so", folder / "via_dir_link")
    os.symlink("d/x/lib/./a.so.1", folder / "via_root_link")


KEPT_LINKS = ["chain_in", "d/x", "lib/a.so", "libdir", "via_dir_link", "via_root_link"]


def test_a_link_is_judged_by_where_it_really_leads_through_any_chain(tmp_path: Path) -> None:
    folder = tmp_path / "built"
    _escaping_tree(folder)
    removed = seal(folder)
    expected = {n for n, t in ESCAPING.items() if t is not None and n != "d/x"}
    expected |= {"lib/up", "through_dir_link", "d/y"}
    assert set(removed) == expected
    left = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_symlink())
    assert left == KEPT_LINKS
    for name in ["chain_in", "lib/a.so", "via_dir_link", "via_root_link"]:
        assert (folder / name).read_text() == "code\n"
    for name in left:  # what is left resolves, for real, inside the folder
        assert Path(os.path.realpath(folder / name)).is_relative_to(folder.resolve())


def test_leads_inside_refuses_each_way_out(tmp_path: Path) -> None:
    folder = tmp_path / "built"
    _escaping_tree(folder)
    for name, text in ESCAPING.items():
        if text is not None and name != "d/x":
            assert not leads_inside(folder / name, folder), name
    for name in KEPT_LINKS:
        assert leads_inside(folder / name, folder), name


def test_a_build_making_a_chain_of_links_to_the_host_loses_them(
    bwrap_sandbox: Sandbox, open_dir: Path
) -> None:
    source = bot_folder(open_dir)
    script = (
        "mkdir d lib && echo code > lib/a.so.1 && ln -s a.so.1 lib/a.so && "
        "ln -s .. d/x && ln -s x/../../../../../../../../etc/shadow d/y && "
        "ln -s d/y shadow && ln -s lib/a.so inside"
    )
    built = open_dir / "built"
    result = build_copy(bwrap_sandbox, source, built, ["sh", "-ec", script], timeout_s=30)
    assert result.ok, result.log
    assert "d/y, shadow" in result.log
    assert not os.path.lexists(built / "d" / "y") and not os.path.lexists(built / "shadow")
    assert (built / "inside").read_text() == "code\n"
    assert os.path.islink(built / "d" / "x")  # the folder itself: inside


@pytest.mark.parametrize("command", [["no-such-compiler", "bot.c"], ["./no-such-script"]])
def test_a_build_command_that_cannot_start_is_a_failed_build(
    any_sandbox: Sandbox, open_dir: Path, command: list[str]
) -> None:
    """The bot's own mistake: a failed build with the reason in its log, never an error of
    the sandbox (which would have the platform try the build again and again)."""
    source = bot_folder(open_dir)
    built = open_dir / "built"
    result = build_copy(any_sandbox, source, built, command, timeout_s=60)
    assert not result.ok
    assert result.log.startswith(f"$ {' '.join(command)}\n")
    assert "no-such" in result.log, result.log
    assert not built.exists()


def test_the_plain_backend_tells_a_missing_command_from_a_platform_fault(open_dir: Path) -> None:
    from sandbox import get_sandbox

    source = bot_folder(open_dir)
    result = build_copy(get_sandbox("none"), source, open_dir / "b", ["no-such-cc"], timeout_s=60)
    assert not result.ok and "command not found: 'no-such-cc'" in result.log
    for code in (errno.ENOENT, errno.EACCES, errno.ENOEXEC):
        assert isinstance(start_failure(OSError(code, "x"), "./bot"), BotCommandError)
    for code in (errno.EAGAIN, errno.ENOMEM, errno.EMFILE):
        error = start_failure(OSError(code, "x"), "./bot")
        assert isinstance(error, SandboxError) and not isinstance(error, BotCommandError)


def test_a_sandbox_that_fails_to_start_the_build_raises_and_leaves_nothing(
    bwrap_sandbox: Sandbox, open_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sandbox itself breaking at spawn (here: its bubblewrap gone since it was set up) is
    the platform's fault: ``SandboxError`` propagates, for the caller to try again later."""
    import tempfile

    from sandbox.bwrap import BwrapSandbox

    broken = BwrapSandbox()
    broken.exe = str(open_dir / "bwrap-removed")
    scratch = open_dir / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    source = bot_folder(open_dir)
    built = open_dir / "built"
    with pytest.raises(SandboxError, match="could not start bubblewrap") as raised:
        build_copy(broken, source, built, ["sh", "-c", "echo hi"], timeout_s=60)
    assert not isinstance(raised.value, BotCommandError)
    assert not built.exists() and list(scratch.iterdir()) == []


DEEP_BUILD = """
import os
os.mkdir("deep")
os.chdir("deep")
for _ in range({depth}):
    os.mkdir("d")
    os.chdir("d")
print("made", {depth}, "nested folders")
"""


@pytest.mark.parametrize("depth", [1500, MAX_DEPTH + 1])
def test_a_build_nesting_folders_too_deep_is_refused_and_leaves_nothing(
    any_sandbox: Sandbox, open_dir: Path, monkeypatch: pytest.MonkeyPatch, depth: int
) -> None:
    import tempfile

    scratch = open_dir / "tmp"
    scratch.mkdir(mode=0o755)
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    source = bot_folder(open_dir)
    (source / "deep.py").write_text(DEEP_BUILD.format(depth=depth))
    built = open_dir / "built"
    result = build_copy(any_sandbox, source, built, ["python3", "deep.py"], timeout_s=120)
    assert not result.ok
    assert f"made {depth} nested folders" in result.log  # the build itself succeeded
    assert f"the build is refused: folders nested more than {MAX_DEPTH} deep" in result.log
    assert not built.exists() and list(scratch.iterdir()) == []  # no staging folder left


def test_a_build_within_the_depth_limit_is_kept(bwrap_sandbox: Sandbox, open_dir: Path) -> None:
    source = bot_folder(open_dir)
    (source / "deep.py").write_text(DEEP_BUILD.format(depth=MAX_DEPTH - 2))
    built = open_dir / "built"
    result = build_copy(bwrap_sandbox, source, built, ["python3", "deep.py"], timeout_s=120)
    assert result.ok, result.log
    assert (built / "deep" / Path(*["d"] * (MAX_DEPTH - 2))).is_dir()


def test_a_bot_folder_nested_too_deep_is_refused_before_any_build(
    bwrap_sandbox: Sandbox, open_dir: Path
) -> None:
    source = bot_folder(open_dir)
    nest(source, 1500)
    try:
        built = open_dir / "built"
        result = build_copy(bwrap_sandbox, source, built, ["sh", "-c", "echo ran"], timeout_s=60)
        assert not result.ok and "ran" not in result.log
        refused = f"the bot folder is refused: folders nested more than {MAX_DEPTH} deep"
        assert refused in result.log
        with pytest.raises(TreeTooLarge):
            check_tree(source)
    finally:
        remove_tree(source)  # the fixture's own clean-up would recurse


def nest(folder: Path, depth: int) -> None:
    """``depth`` folders, each inside the last, in ``folder`` (``os.makedirs`` recurses)."""
    path = str(folder)
    for _ in range(depth):
        path += "/d"
        os.mkdir(path)


MANY_FILES = """
made = 0
for i in range({count}):
    try:
        open(f"f{{i}}", "w").close()
        made += 1
    except OSError as exc:
        print("stopped:", exc.strerror)
        break
print("made", made)
"""


def test_a_build_writing_too_many_files_is_refused_and_leaves_nothing(
    any_sandbox: Sandbox, open_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    scratch = open_dir / "tmp"
    scratch.mkdir(mode=0o755)
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    source = bot_folder(open_dir)
    (source / "many.py").write_text(MANY_FILES.format(count=MAX_FILES + 500))
    built = open_dir / "built"
    result = build_copy(any_sandbox, source, built, ["python3", "many.py"], timeout_s=120)
    assert not result.ok
    assert f"the build is refused: more than {MAX_FILES} files and folders" in result.log
    if os.geteuid() == 0:  # the staging tmpfs holds no more: the build met ENOSPC itself
        assert "stopped: No space left on device" in result.log
    assert not built.exists() and list(scratch.iterdir()) == []


def test_removing_a_tree_of_any_depth_needs_no_recursion(tmp_path: Path) -> None:
    deep = tmp_path / "deep"
    deep.mkdir()
    nest(deep, 1500)
    with pytest.raises(RecursionError):
        shutil.rmtree(deep)  # what the build used to do (Python 3.11)
    remove_tree(deep)
    assert not deep.exists()
