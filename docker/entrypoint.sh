#!/bin/sh
# Start one platform service in the container:
#
#   web      gunicorn on 0.0.0.0:$ARENA_PORT (8000)
#   worker   a Celery worker for matches and bot builds
#   beat     the Celery scheduler (ladders and the reaper); run exactly one
#   migrate  apply the database migrations and exit
#   demo     register the sample bots and play a tournament (flask --app web demo --help)
#   anything else runs as a command, e.g. `flask --app web user create alice` or `arena games`
#
# Every service first waits for PostgreSQL and Redis. ARENA_MIGRATE=1 migrates before starting.
set -eu
HERE="$(dirname "$0")"

wait_for_services() {
    python "$HERE/wait_for_services.py"
}

migrate() {
    echo "entrypoint: applying database migrations" >&2
    flask --app web db upgrade
}

service="${1:-web}"
[ $# -gt 0 ] && shift

case "$service" in
    web | worker | beat | migrate | demo)
        wait_for_services
        if [ "${ARENA_MIGRATE:-0}" = 1 ] && [ "$service" != migrate ]; then migrate; fi
        ;;
esac

case "$service" in
    web)
        exec gunicorn "web:create_app()" --bind "0.0.0.0:${ARENA_PORT:-8000}" \
            --workers "${ARENA_WEB_WORKERS:-2}" --access-logfile - "$@"
        ;;
    worker)
        # Every queue, in priority order: builds, the (short) periodic tasks, validation and
        # placement matches, then the rest (with a `builder` container running, `-Q` can drop
        # builds here). The node name carries the container's host name for `inspect ping`.
        exec celery -A web.worker:celery worker -Q "${ARENA_WORKER_QUEUES:-builds,default,validate,urgent,matches}" \
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
    *)
        exec "$service" "$@"
        ;;
esac
