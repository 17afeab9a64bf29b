"""Two worker hosts as real containers, sharing nothing but PostgreSQL, Redis and the object store.

Each host is ``docker-compose.worker.yml`` as a user runs it (its own Compose project: the
``cgroups`` one-shot and one ``worker``, with the worker's seccomp profile, no capabilities and
no volume), started from the platform image that ``docker/ci/build-images.sh`` builds for the
Compose stack test (reused when that test built it first). The CI override
(``docker/ci/compose.worker.ci.yml``) only swaps the bridge for the host's network, since CI's
engine has none, and gives each host a name of its own. One ladder's matches are played by both
hosts; one host is killed whole (``docker kill``: the worker, its pool and its bots) in the
middle of a match: every match finishes, the lost one played again once, each rated once.

Without an engine (or a writable cgroup v1 hierarchy for the bots' limits) the test skips with
the reason; ``ARENA_REQUIRE_DOCKER=1`` (CI) turns that skip into a failure.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy import select
from sqlalchemy.engine import make_url

from tests.compose.test_compose import (
    ROOT,
    WORKER_HOST_FILE,
    build_images,
    compose_env,
    docker,
    engine_problem,
    exclusive_engine,
    run_compose,
)
from tests.web.conftest import sample_version, wait_for
from tests.web.test_many_hosts import on_the_ladder_unvalidated
from tests.web.test_worker import finished, match_row, rating_changes
from web.config import default_settings
from web.extensions import db
from web.models import MatchStatus, Rating
from web.services import ladders, matches
from web.services.queue import MATCH_QUEUES
from web.storage import get_storage

pytestmark = [pytest.mark.services, pytest.mark.slow, pytest.mark.docker]

CI_WORKER_FILE = ROOT / "docker" / "ci" / "compose.worker.ci.yml"
CONTROLLERS = ("memory", "pids", "cpu")
HOST_PATHS = {"STORAGE_DIR", "CACHE_DIR"}
"""Settings naming folders of the test's machine: each container keeps its own (the image's)."""


@dataclass
class WorkerHost:
    """One worker host: a Compose project of ``docker-compose.worker.yml`` on the engine."""

    name: str
    project: str
    env_file: Path
    env: dict[str, str]

    @property
    def bot_cgroup(self) -> str:
        return f"kozyri-arena-bots-{self.project}"

    def compose(self, *args: str, timeout: float = 300) -> str:
        options = ["-p", self.project, "--env-file", str(self.env_file)]
        done = run_compose([WORKER_HOST_FILE, CI_WORKER_FILE], [*options, *args], self.env, timeout)
        assert done.returncode == 0, f"compose {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def container(self) -> str:
        found = self.compose("ps", "-a", "-q", "worker").split()
        assert len(found) == 1, found
        return found[0]

    def logs(self) -> str:
        return self.compose("logs", "--no-color", "worker")

    def remove_cgroups(self) -> list[str]:
        """Remove the host's (empty, once it is down) bot cgroup subtrees; what could not go."""
        stuck = []
        for controller in CONTROLLERS:
            top = Path("/sys/fs/cgroup") / controller / self.bot_cgroup
            if not top.is_dir():
                continue
            folders = sorted((d for d in top.rglob("*") if d.is_dir()), key=lambda d: -len(d.parts))
            for folder in [*folders, top]:
                try:
                    folder.rmdir()
                except OSError as exc:
                    stuck.append(f"{folder}: {exc}")
        return stuck


def engine_or_skip() -> None:
    problem = engine_problem()
    if problem is None and not os.access("/sys/fs/cgroup/memory", os.W_OK):
        problem = "the worker's bot cgroups need a writable cgroup v1 memory hierarchy (root)"
    if problem is not None:
        if os.environ.get("ARENA_REQUIRE_DOCKER") == "1":
            pytest.fail(f"ARENA_REQUIRE_DOCKER=1 but worker containers cannot run: {problem}")
        pytest.skip(problem)


def host_settings(app: Flask) -> str:
    """The worker host's ``.env``: the site's settings (the same on every host), its secret key,
    and a database URL with a password (the container refuses one without; PostgreSQL's trust
    rule for the test's role ignores it)."""
    settings = {}
    for key in default_settings():
        if key in HOST_PATHS:
            continue
        value = app.config[key]
        settings[key] = "1" if value is True else "0" if value is False else str(value)
    url = make_url(app.config["SQLALCHEMY_DATABASE_URI"])
    if not url.password:
        url = url.set(password=secrets.token_hex(24))
    settings["DATABASE_URL"] = url.render_as_string(hide_password=False)
    settings["SECRET_KEY"] = secrets.token_hex(32)
    # The match queues only, as in the process test: an activation asks for a scheduler run
    # (on `default`), which would add placement matches to the ladder.
    settings["WORKER_QUEUES"] = ",".join(MATCH_QUEUES)
    return "".join(f"ARENA_{key}={value}\n" for key, value in settings.items())


@pytest.fixture
def worker_hosts(s3_app: Flask, tmp_path: Path) -> Iterator[dict[str, WorkerHost]]:
    """Two worker hosts, created (not started) on the engine; taken down completely after."""
    engine_or_skip()
    with exclusive_engine():
        images = build_images()
        hosts = {}
        for name in ("host-a", "host-b"):
            env_file = tmp_path / f"{name}.env"  # the test writes it again with its settings
            env_file.write_text(host_settings(s3_app))
            project = f"kozyri-arena-ci-{name}"
            env = compose_env(
                {
                    "ARENA_IMAGE": images["ARENA_IMAGE"],
                    "ARENA_ENV_FILE": str(env_file),
                    "ARENA_CI_WORKER_HOST": name,
                    "ARENA_BOT_CGROUP": f"kozyri-arena-bots-{project}",
                    "ARENA_WORKER_CONCURRENCY": "1",
                }
            )
            hosts[name] = WorkerHost(name, project, env_file, env)
        on_every_host(hosts, "down", "--remove-orphans")  # what an aborted run left
        for host in hosts.values():
            host.remove_cgroups()
        try:
            yield hosts
        finally:
            on_every_host(hosts, "down", "--remove-orphans", "--timeout", "0")
            stuck = [line for host in hosts.values() for line in host.remove_cgroups()]
            assert stuck == [], "a worker host's bot cgroups could not be removed"


def on_every_host(hosts: dict[str, WorkerHost], *args: str) -> None:
    """Compose ``args`` on every host at once (as on separate machines)."""
    with ThreadPoolExecutor(len(hosts)) as pool:
        for done in [pool.submit(host.compose, *args) for host in hosts.values()]:
            done.result()


def holding(hosts: dict[str, WorkerHost], ids: list[int]) -> tuple[int, WorkerHost] | None:
    """A match in the middle of its play (steps in the live replay) and the host that holds it."""
    for match_id in ids:
        row = match_row(match_id)
        name = (row.worker or "").rpartition(":")[0]
        live = (row.replay_path or "").startswith("replays/live/")
        if row.status == MatchStatus.RUNNING and live and name in hosts:
            return match_id, hosts[name]
    return None


@pytest.mark.timeout(900)
def test_two_worker_containers_play_one_ladder_and_survive_a_lost_host(
    s3_app: Flask, worker_hosts: dict[str, WorkerHost]
) -> None:
    # A lease long enough that a busy machine's slow bot start is not taken for a lost host.
    s3_app.config.update(MOVE_TIMEOUT=1.0, TIME_BANK=1.0, MATCH_LEASE=12)
    for host in worker_hosts.values():
        host.env_file.write_text(host_settings(s3_app))
    greedy = sample_version("python/challenge-greedy")
    sleeper = on_the_ladder_unvalidated("hostile/sleeper")  # each of its turns runs out of time
    ladder = ladders.default_ladder("challenge")
    pairs = [[greedy, sleeper], [sleeper, greedy], [greedy, sleeper]]
    ids = [
        matches.create_match(ladder.game_config(), seats, seed=seed, ladder_id=ladder.id).id
        for seed, seats in enumerate(pairs, start=11)
    ]
    db.session.commit()
    on_every_host(worker_hosts, "up", "-d", "--no-build")
    for host in worker_hosts.values():
        mounts = json.loads(docker("inspect", "--format", "{{json .Mounts}}", host.container()))
        assert {m["Type"] for m in mounts} == {"bind"}, mounts  # no volume, ...
        assert all(m["Source"].startswith("/sys/fs/cgroup/") for m in mounts), mounts  # no folder

    def one_in_the_middle_of_a_match() -> tuple[int, WorkerHost] | None:
        matches.reap()  # what beat does every REAP_INTERVAL (a message lost is sent again)
        return holding(worker_hosts, ids)

    try:
        killed, lost = wait_for(one_in_the_middle_of_a_match, 240, "a host to be mid-match")
    except BaseException:
        for host in worker_hosts.values():
            print(f"--- {host.name}\n{host.logs()[-4000:]}")
        print([(r.status, r.worker, r.replay_path, r.error) for r in map(match_row, ids)])
        raise
    docker("kill", lost.container())  # the host is gone, its bots with it
    survivor = worker_hosts[({*worker_hosts} - {lost.name}).pop()]

    def all_finished() -> bool:
        matches.reap()  # what beat does every REAP_INTERVAL
        return all(finished(match_id) for match_id in ids)

    try:
        wait_for(all_finished, 300, "every match to finish on the other host")
    except BaseException:
        print(survivor.logs()[-4000:])
        print([(r.status, r.worker, r.attempts, r.error) for r in map(match_row, ids)])
        raise
    state = json.loads(docker("inspect", "--format", "{{json .State}}", lost.container()))
    assert state["Running"] is False and state["Restarting"] is False, state  # still gone
    rows = {match_id: match_row(match_id) for match_id in ids}
    assert (rows[killed].attempts, rows[killed].lost_workers, rows[killed].faults) == (2, 1, 0)
    assert rows[killed].worker.startswith(f"{survivor.name}:")  # played again on the other host
    assert all(rows[m].attempts == 1 for m in ids if m != killed), "a match was played twice"
    assert all(rating_changes(match_id) == 2 for match_id in ids)
    games = db.session.scalars(select(Rating.games).where(Rating.ladder_id == ladder.id)).all()
    assert sorted(games) == [len(ids), len(ids)]
    client = s3_app.test_client()
    for match_id, row in rows.items():
        assert row.replay_path.endswith(".json.gz") and get_storage().exists(row.replay_path)
        replay = client.get(f"/api/v1/matches/{match_id}/replay").get_json()
        assert replay["seed"] == row.seed and replay["steps"]
    # The survivor fetched the bots from the object store into its own cache, and wrote nothing
    # to a storage folder of its own.
    look = "ls /var/lib/arena/cache/trees; ls -A /var/lib/arena/storage | wc -l"
    seen = docker("exec", survivor.container(), "sh", "-c", look).split()
    assert any(name.endswith(".size") for name in seen[:-1]) and seen[-1] == "0", seen
