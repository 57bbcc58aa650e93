#!/bin/sh
# PostgreSQL 18 + pgvector for compose.yaml, from the binaries of factledger's `embedded` extra
# (the same server the embedded default and the tests start), listening on the network.
#
# The first time PGDATA is empty, it creates the cluster with the `postgres` superuser
# (password POSTGRES_PASSWORD, which owns the tables and runs the migrations), the database
# POSTGRES_DB (default `factledger`) and the login role POSTGRES_APP_ROLE (default
# `factledger_app`, password POSTGRES_APP_PASSWORD) as which the pgvector memory runs: it
# neither owns the tables nor bypasses row-level security (README, "PostgreSQL + pgvector").
set -eu

: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
: "${POSTGRES_APP_PASSWORD:?POSTGRES_APP_PASSWORD must be set}"
PGDATA="${PGDATA:-/var/lib/factledger/postgres}"
POSTGRES_DB="${POSTGRES_DB:-factledger}"
POSTGRES_APP_ROLE="${POSTGRES_APP_ROLE:-factledger_app}"
bin=/opt/postgres/bin

for name in "$POSTGRES_DB" "$POSTGRES_APP_ROLE"; do
    case "$name" in
    *[!a-z0-9_]* | "" | [0-9]*)
        echo "POSTGRES_DB and POSTGRES_APP_ROLE take lower-case letters, digits and _" >&2
        exit 2
        ;;
    esac
done

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    password_file="$(mktemp)"
    trap 'rm -f "$password_file"' EXIT
    printf '%s\n' "$POSTGRES_PASSWORD" >"$password_file"
    "$bin/initdb" --pgdata="$PGDATA" --username=postgres --pwfile="$password_file" \
        --encoding=UTF8 --locale=C.UTF-8 --auth-local=trust --auth-host=scram-sha-256
    rm -f "$password_file"
    echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
    # The log never holds a statement, a parameter or a refused value (README, "Logs and
    # personal content").
    cat >>"$PGDATA/postgresql.conf" <<'CONF'
listen_addresses = '*'
unix_socket_directories = '/tmp'
log_min_messages = log
log_min_error_statement = panic
log_statement = none
log_min_duration_statement = -1
log_min_duration_sample = -1
log_parameter_max_length = 0
log_parameter_max_length_on_error = 0
log_error_verbosity = terse
CONF
    # A password's quotes are doubled in its SQL literal; single-user mode reads stdin.
    app_password="$(printf '%s' "$POSTGRES_APP_PASSWORD" | sed "s/'/''/g")"
    printf '%s;\n\n' \
        "CREATE DATABASE $POSTGRES_DB" \
        "CREATE ROLE $POSTGRES_APP_ROLE LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE PASSWORD '$app_password'" |
        "$bin/postgres" --single -D "$PGDATA" -j postgres >/dev/null
fi

exec "$bin/postgres" -D "$PGDATA"
