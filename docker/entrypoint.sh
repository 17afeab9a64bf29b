#!/bin/sh
# Start one platform service in the container:
#
#   web      gunicorn on $ARENA_LISTEN (0.0.0.0:8000; ARENA_PORT is not read here)
#   worker   a Celery worker for matches and bot builds
#   beat     the Celery scheduler (ladders and the reaper); run exactly one
#   migrate  apply the database migrations, create the storage (an object store's bucket) and exit
#   delegate-cgroups  (as root, once) hand the bots' cgroup folders to the worker's user
#   demo     register the sample bots and play a tournament (flask --app web demo --help)
#   samples  register every game's sample bots, the opponents of people's tables (Play)
#   anything else runs as a command, e.g. `flask --app web user create alice` or `arena games`
#
# Every service first checks its secrets (docker/preflight.py: a missing, well-known or short
# ARENA_SECRET_KEY or database password stops it with the reason; the worker also checks that
# per-bot limits hold), then waits for PostgreSQL and Redis. ARENA_MIGRATE=1 migrates first.
set -eu
HERE="$(dirname "$0")"

wait_for_services() {
    python "$HERE/wait_for_services.py"
}

migrate() {
    echo "entrypoint: applying database migrations" >&2
    flask --app web db upgrade
    flask --app web storage init
}

delegate_cgroups() {
    # The folders are the worker's bind mounts of one sub-folder per v1 hierarchy on the host
    # (docker-compose.yml, service `cgroups`): never a hierarchy's root, never read-only.
    for controller in memory pids cpu; do
        dir="/sys/fs/cgroup/$controller"
        # /proc/self/mountinfo: 4th field the folder mounted, 5th where, 6th the options, then
        # "-", the file system type. The last mount at $dir is the one in force.
        mounted="$(awk -v d="$dir" '$5 == d { for (i = 7; $i != "-"; i++); print $4, $6, $(i + 1) }' \
            /proc/self/mountinfo | tail -1)"
        case "$mounted" in
            "/ "* | "" | *" ro,"* | *" ro "*) ok=0 ;;
            *" cgroup") ok=1 ;;
            *) ok=0 ;;
        esac
        if [ "$ok" != 1 ]; then
            echo "delegate-cgroups: $dir is not a writable sub-folder of the host's cgroup v1" \
                "$controller hierarchy (found: ${mounted:-nothing})" >&2
            echo "delegate-cgroups: per-bot limits need cgroup v1 memory, pids and cpu (README)" >&2
            exit 1
        fi
        chown arena:arena "$dir"
    done
    echo "delegate-cgroups: the bots' cgroup folders now belong to the worker's user" >&2
}

service="${1:-web}"
[ $# -gt 0 ] && shift

case "$service" in
    web | worker | beat | migrate | demo | samples)
        python "$HERE/preflight.py" "$service"
        wait_for_services
        if [ "${ARENA_MIGRATE:-0}" = 1 ] && [ "$service" != migrate ]; then migrate; fi
        ;;
esac

case "$service" in
    web)
        # Threads, not processes, serve the requests: a live stream holds one thread while it
        # is open (at most ARENA_LIVE_STREAMS of them per process, 48 by default), and the
        # rest of the 64 serve the pages meanwhile.
        exec gunicorn "web:create_app()" --bind "${ARENA_LISTEN:-0.0.0.0:8000}" \
            --workers "${ARENA_WEB_WORKERS:-2}" --worker-class gthread \
            --threads "${ARENA_WEB_THREADS:-64}" --access-logfile - "$@"
        ;;
    worker)
        # Every queue, in priority order: builds, the (short) periodic tasks, validation and
        # placement matches, then the rest (with a `builder` container running, `-Q` can drop
        # builds here). The node name carries the container's host name for `inspect ping`.
        exec celery -A web.worker:celery worker -Q "${ARENA_WORKER_QUEUES:-builds,default,validate,urgent,challenges,matches}" \
            --concurrency "${ARENA_WORKER_CONCURRENCY:-2}" --prefetch-multiplier 1 \
            -n "worker@%h" -l info "$@"
        ;;
    builder)
        # A reserved slot (optional, one more container with this command): builds and
        # self-tests first, then validation matches, never a ladder match.
        exec celery -A web.worker:celery worker -Q builds,default,validate \
            --concurrency 1 --prefetch-multiplier 1 -n "builder@%h" -l info "$@"
        ;;
    beat)
        exec celery -A web.worker:celery beat -l info \
            -s /var/lib/arena/beat/celerybeat-schedule "$@"
        ;;
    migrate)
        migrate
        ;;
    demo)
        exec flask --app web demo "$@"
        ;;
    samples)
        exec flask --app web samples "$@"
        ;;
    delegate-cgroups)
        delegate_cgroups
        ;;
    *)
        exec "$service" "$@"
        ;;
esac
