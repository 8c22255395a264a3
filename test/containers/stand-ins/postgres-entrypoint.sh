#!/bin/sh
# The PostgreSQL stand-in's start (test/support/containers.ts), doing what compose.yaml relies on in
# the official image: on a first start (an empty PGDATA) it makes the cluster with the superuser
# POSTGRES_USER and its password POSTGRES_PASSWORD, and the database POSTGRES_DB; then it runs the
# server as `postgres`, listening on every interface of the container, passwords required.
set -eu
BIN=/usr/lib/postgresql/15/bin
: "${PGDATA:=/var/lib/postgresql/data}"
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
mkdir -p "$PGDATA" /run/postgresql
chown -R postgres:postgres "$PGDATA" /run/postgresql
chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "POSTGRES_PASSWORD is not set" >&2
    exit 1
  fi
  # The password reaches initdb through a file only postgres reads, never a command line.
  umask 077
  printf '%s\n' "$POSTGRES_PASSWORD" > /run/postgresql/pwfile
  chown postgres /run/postgresql/pwfile
  runuser -u postgres -- "$BIN/initdb" -D "$PGDATA" -U "$POSTGRES_USER" --pwfile=/run/postgresql/pwfile \
    --auth-host=scram-sha-256 --auth-local=trust >/dev/null
  rm -f /run/postgresql/pwfile
  echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    runuser -u postgres -- "$BIN/postgres" -D "$PGDATA" -c listen_addresses='' &
    until runuser -u postgres -- "$BIN/pg_isready" -q -h /run/postgresql; do sleep 0.2; done
    runuser -u postgres -- "$BIN/psql" -h /run/postgresql -U "$POSTGRES_USER" -d postgres -q -v ON_ERROR_STOP=1 \
      -c "CREATE DATABASE \"$POSTGRES_DB\""
    runuser -u postgres -- "$BIN/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
  fi
fi
# setpriv execs the server itself (runuser would stay as its parent), so the stop signal reaches it.
exec setpriv --reuid=postgres --regid=postgres --init-groups "$BIN/postgres" -D "$PGDATA" -c listen_addresses='*'
