#!/bin/sh
# Initialise the data folder on first start (user, password, database), then run PostgreSQL in
# the foreground on 127.0.0.1:$PGPORT plus the container's addresses.
set -eu
: "${POSTGRES_USER:=postgres}" "${POSTGRES_PASSWORD:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    pwfile="$(mktemp)"
    printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
    initdb -D "$PGDATA" --username="$POSTGRES_USER" --pwfile="$pwfile" \
        --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 >/dev/null
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
    if [ "$POSTGRES_DB" != postgres ]; then
        echo "CREATE DATABASE \"$POSTGRES_DB\" OWNER \"$POSTGRES_USER\";" |
            postgres --single -D "$PGDATA" postgres >/dev/null
    fi
    echo "postgres-entrypoint: initialised $PGDATA" >&2
fi
exec postgres -D "$PGDATA" -p "$PGPORT" -c listen_addresses='*' \
    -c unix_socket_directories=/run/postgresql "$@"
